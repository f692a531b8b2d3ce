package ipvs

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/model"
)

// TestComputeGoldenIPv6 renders the IPv6 proxier's whole desired state —
// kube-ipvs0's /128s, the virtual servers, the KUBE-6-* sets and the
// ip6tables-restore payload — and compares it with
// testdata/ipv6_NAME.golden (go test -run TestComputeGoldenIPv6 -update
// rewrites them).
func TestComputeGoldenIPv6(t *testing.T) {
	tcp, udp, sctp := corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP
	for _, tc := range []struct {
		name     string
		snap     *model.Snapshot
		settings func(*Settings)
	}{
		{name: "ipv6_no_services", snap: snapshot6()},
		{name: "ipv6_clusterip_kube_dns", snap: snapshot6(kubeDNS6()...)},
		{name: "ipv6_nodeport", snap: snapshot6(
			sp("default", "web", "http", tcp, "fd00:10:96::20", 80, nodePort(30080), eps("local:[fd00:10:244::8]:8080", "[fd00:10:244:1::9]:8080")),
			sp("default", "syslog", "", udp, "fd00:10:96::21", 514, nodePort(30514), etpLocal, eps("[fd00:10:244:1::3]:514")),
			sp("default", "sig", "", sctp, "fd00:10:96::23", 3868, nodePort(31868), etpLocal, eps("local:[fd00:10:244::5]:3868")),
		)},
		{name: "ipv6_nodeport_addresses", snap: snapshot6(sp("default", "web", "", tcp, "fd00:10:96::20", 80, nodePort(30080), eps("[fd00:10:244:1::9]:8080"))),
			settings: func(s *Settings) { s.NodePortCIDRs = []netip.Prefix{prefix("fc00:f853:ccd:e793::/64")} }},
		{name: "ipv6_external_ips_and_load_balancer", snap: snapshot6(
			sp("default", "ext", "", tcp, "fd00:10:96::34", 80, externalIPs("2001:db8:5::5", nodeIP6.String()), clientIP(10800), eps("[fd00:10:244:1::f]:80")),
			sp("default", "lb-local", "", tcp, "fd00:10:96::37", 80, nodePort(30037), etpLocal,
				loadBalancer("2001:db8:100::21", 32000, "fc00:f853:ccd:e793::/64"), eps("local:[fd00:10:244::12]:80")),
			sp("default", "lb-fw", "", udp, "fd00:10:96::38", 53, nodePort(30038), loadBalancer("2001:db8:100::22", 0, "2001:db8:7::/48", "2001:db8:8::1/128"), eps("[fd00:10:244:1::13]:53")),
		)},
		{name: "ipv6_no_cluster_cidr", snap: snapshot6(kubeDNS6()...), settings: func(s *Settings) { s.LocalDetector = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSettings6()
			if tc.settings != nil {
				tc.settings(&s)
			}
			d := Compute(tc.snap, s)
			golden.Check(t, tc.name+".golden", []byte(d.String()))
			checkDesired(t, tc.snap, d)
			for _, a := range d.Addresses {
				if !a.Is6() {
					t.Errorf("IPv4 address %s on the IPv6 proxier's kube-ipvs0", a)
				}
			}
		})
	}
}

// TestIPv6SetsAreUpstreams: the IPv6 proxier's sets are upstream's
// KUBE-6-* names, cut to the kernel's 31 characters, of family inet6
// (bitmap:port sets have none).
func TestIPv6SetsAreUpstreams(t *testing.T) {
	var got []string
	for _, s := range setsOf(corev1.IPv6Protocol) {
		got = append(got, s.Name)
	}
	want := []string{
		"KUBE-6-LOOP-BACK", "KUBE-6-CLUSTER-IP", "KUBE-6-EXTERNAL-IP", "KUBE-6-EXTERNAL-IP-LOCAL",
		"KUBE-6-LOAD-BALANCER", "KUBE-6-LOAD-BALANCER-FW", "KUBE-6-LOAD-BALANCER-LOCAL",
		"KUBE-6-LOAD-BALANCER-SOURCE-IP", "KUBE-6-LOAD-BALANCER-SOURCE-CID",
		"KUBE-6-NODE-PORT-TCP", "KUBE-6-NODE-PORT-LOCAL-TCP", "KUBE-6-NODE-PORT-UDP", "KUBE-6-NODE-PORT-LOCAL-UDP",
		"KUBE-6-NODE-PORT-SCTP-HASH", "KUBE-6-NODE-PORT-LOCAL-SCTP-HAS", "KUBE-6-HEALTH-CHECK-NODE-PORT", "KUBE-6-IPVS-IPS",
	}
	if !slices.Equal(got, want) {
		t.Errorf("IPv6 set names\n  got  %q\n  want %q", got, want)
	}
	for _, name := range want {
		if !IsKubeProxySet(name) {
			t.Errorf("IsKubeProxySet(%q) = false", name)
		}
	}
	d := Compute(snapshot6(kubeDNS6()...), baseSettings6())
	p := Diff(d, &Actual{Sets: map[string]ActualSet{}}, DiffOptions{})
	lines := planLines(p)
	for _, line := range []string{
		"ipset create KUBE-6-CLUSTER-IP hash:ip,port family inet6 hashsize 1024 maxelem 65536 -exist",
		"ipset create KUBE-6-NODE-PORT-TCP bitmap:port range 0-65535 -exist",
		"ipset add KUBE-6-CLUSTER-IP fd00:10:96::a,udp:53 -exist",
		"ipvsadm -A -u [fd00:10:96::a]:53 -s rr",
		"ipvsadm -a -u [fd00:10:96::a]:53 -r [fd00:10:244::5]:53 -m -w 1",
		"ip addr add fd00:10:96::a/128 dev kube-ipvs0",
		`ip6tables -t nat -C OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES || ip6tables -t nat -I OUTPUT ...`,
	} {
		if !slices.Contains(lines, line) {
			t.Errorf("plan lacks %q:\n%s", line, p)
		}
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "ip6tables-restore --noflush --counters") }) {
		t.Errorf("plan restores no ip6tables payload:\n%s", p)
	}
}

// TestIPv6PayloadLeavesOnlyIPv6LoopbackAlone: the only line of the payload
// that differs between the families, apart from the set names, is
// upstream's loAddr.
func TestIPv6PayloadLeavesOnlyIPv6LoopbackAlone(t *testing.T) {
	v4 := string(Compute(snapshot(kubeDNS()...), baseSettings()).IPTables)
	v6 := string(Compute(snapshot6(kubeDNS6()...), baseSettings6()).IPTables)
	v6 = strings.ReplaceAll(v6, "KUBE-6-", "KUBE-")
	v6 = strings.ReplaceAll(v6, "-s ::1/128 -j RETURN", "-s 127.0.0.0/8 -j RETURN")
	v6 = strings.ReplaceAll(v6, clusterPod6, clusterPod)
	if v4 != v6 {
		t.Errorf("the IPv6 payload differs from the IPv4 one beyond set names, loopback and pod range:\n--- IPv4\n%s--- IPv6\n%s", v4, v6)
	}
}
