package upstream

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestCaseFamilies: options.ipFamily picks the proxiers a case runs
// through, and ForFamily gives each the node IP and cluster CIDR of its
// family, as kube-proxy's server splits --cluster-cidr.
func TestCaseFamilies(t *testing.T) {
	c, err := ParseCase([]byte(`
node: {name: node-a}
options: {ipFamily: DualStack, clusterCIDR: "10.244.0.0/16,fd00:10:244::/56", nodePortAddresses: [primary]}
objects: []
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Families(); !slices.Equal(got, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}) {
		t.Errorf("DualStack families = %v", got)
	}
	v4, v6 := c.ForFamily(corev1.IPv4Protocol).Options, c.ForFamily(corev1.IPv6Protocol).Options
	if v4.NodeIP != DefaultNodeIP || v4.ClusterCIDR != "10.244.0.0/16" || v4.isIPv6() {
		t.Errorf("IPv4 view: %+v", v4)
	}
	if v6.NodeIP != DefaultNodeIPv6 || v6.ClusterCIDR != "fd00:10:244::/56" || !v6.isIPv6() {
		t.Errorf("IPv6 view: %+v", v6)
	}
	if cidrs, err := nodePortCIDRs(v6); err != nil || !slices.Equal(cidrs, []string{DefaultNodeIPv6 + "/128"}) {
		t.Errorf("IPv6 primary node-port CIDRs = %v, %v", cidrs, err)
	}

	only6, err := ParseCase([]byte(`{node: {name: n}, options: {ipFamily: IPv6, nodeIP: "fd00::7", clusterCIDR: 10.244.0.0/16}, objects: []}`))
	if err != nil {
		t.Fatal(err)
	}
	o := only6.ForFamily(only6.Families()[0]).Options
	if len(only6.Families()) != 1 || o.NodeIP != "fd00::7" || o.ClusterCIDR != "" {
		t.Errorf("IPv6-only view: families %v, %+v", only6.Families(), o)
	}
	for _, bad := range []string{
		`{node: {name: n}, options: {ipFamily: IPv5}, objects: []}`,
		`{node: {name: n}, options: {nodeIPv6: 10.0.0.1}, objects: []}`,
		`{node: {name: n}, options: {clusterCIDR: "10.244.0.0/16,fd00::/300"}, objects: []}`,
	} {
		if _, err := ParseCase([]byte(bad)); err == nil {
			t.Errorf("ParseCase(%s) accepted", bad)
		}
	}
}

// TestCorpusCoversIPv6: the corpus runs IPv6-only and dual-stack cases
// through upstream's IPv6 proxiers.
func TestCorpusCoversIPv6(t *testing.T) {
	ipv6, dual := 0, 0
	for _, dir := range nftCorpusDirs {
		cases, err := LoadCorpus(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			switch c.Options.IPFamily {
			case string(corev1.IPv6Protocol):
				ipv6++
			case DualStack:
				dual++
			}
		}
	}
	if ipv6 < 15 || dual < 4 {
		t.Errorf("corpus has %d IPv6 and %d dual-stack cases, want at least 15 and 4", ipv6, dual)
	}
}
