package proxy

import (
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/model"
)

// canaryFakeRunner is iptablestest's fake runner with the canary chain
// calls, done as iptables-restore payloads into the fake.
type canaryFakeRunner struct{ *iptablestest.FakeRunner }

func (r canaryFakeRunner) EnsureChain(table, chain string) error {
	return r.Restore([]byte("*" + table + "\n:" + chain + " - [0:0]\nCOMMIT\n"))
}

func (r canaryFakeRunner) ChainExists(table, chain string) (bool, error) {
	return r.Dump().Chain(table, chain) != nil, nil
}

// syncIPTables syncs the family's snapshot of objs through an iptables
// backend over a fake iptables and returns the fake's nat and filter
// tables as iptables-save prints them, and the sysctls it set.
func syncIPTables(t *testing.T, clusterCIDR string, family corev1.IPFamily) (string, map[string]int) {
	t.Helper()
	cfg, err := config.Parse("config.conf", []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: "+clusterCIDR+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	fake := canaryFakeRunner{iptablestest.NewFakeRunner()}
	sys := &fakeSysctls{values: map[string]int{sysctlRouteLocalnet: 0, sysctlNFConntrackTCPBeLiberal: 0}}
	b, err := startIPTablesBackend(cfg, family, nodePortSelection{}, fake, "fake iptables", sys, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	objs := dualStackObjects()
	if _, err := b.Sync(model.BuildFamily(family, objs.Services, objs.EndpointSlices, "n1")); err != nil {
		t.Fatal(err)
	}
	d := fake.Dump()
	return d.Tables["nat"].Save() + d.Tables["filter"].Save(), sys.values
}

// TestIPTablesBackendPerFamily: on a dual-stack node the IPv6 backend
// writes the Service's IPv6 ClusterIP and endpoint, detects local
// traffic by the IPv6 cluster CIDR and sets no route_localnet (no
// localhost node ports in IPv6, as upstream); the IPv4 backend writes
// exactly what an IPv4 node's writes.
func TestIPTablesBackendPerFamily(t *testing.T) {
	ipv6, sys6 := syncIPTables(t, "10.244.0.0/16,fd00:10:244::/56", corev1.IPv6Protocol)
	for _, want := range []string{"-d fd00:10:96::b --dport 80", "--to-destination [fd00:10:244:1::5]:8080", "! -s fd00:10:244::/56"} {
		if !strings.Contains(ipv6, want) {
			t.Errorf("IPv6 rules lack %q:\n%s", want, ipv6)
		}
	}
	if strings.Contains(ipv6, "10.96.0.11") || strings.Contains(ipv6, "127.0.0.0/8") {
		t.Errorf("IPv6 rules hold IPv4 addresses:\n%s", ipv6)
	}
	if sys6[sysctlRouteLocalnet] != 0 {
		t.Errorf("the IPv6 backend set route_localnet")
	}
	dualIPv4, _ := syncIPTables(t, "10.244.0.0/16,fd00:10:244::/56", corev1.IPv4Protocol)
	ipv4Node, sys4 := syncIPTables(t, "10.244.0.0/16", corev1.IPv4Protocol)
	if dualIPv4 != ipv4Node {
		t.Errorf("a dual-stack node's IPv4 rules differ from an IPv4 node's:\n%s\n---\n%s", dualIPv4, ipv4Node)
	}
	if !strings.Contains(ipv4Node, "-d 10.96.0.11 --dport 80") || strings.Contains(ipv4Node, "fd00:") || sys4[sysctlRouteLocalnet] != 1 {
		t.Errorf("IPv4 rules (route_localnet %d):\n%s", sys4[sysctlRouteLocalnet], ipv4Node)
	}
}
