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

func goldenCases() []struct {
	name     string
	snap     *model.Snapshot
	settings func(*Settings)
} {
	tcp, udp, sctp := corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP
	return []struct {
		name     string
		snap     *model.Snapshot
		settings func(*Settings)
	}{
		{name: "no_services", snap: snapshot()},
		{name: "clusterip_kube_dns", snap: snapshot(kubeDNS()...)},
		{name: "clusterip_no_endpoints", snap: snapshot(sp("default", "empty", "", tcp, "10.96.0.40", 80))},
		{name: "nodeport", snap: snapshot(
			sp("default", "web", "http", tcp, "10.96.0.20", 80, nodePort(30080), eps("local:10.244.0.8:8080", "10.244.1.9:8080")),
			sp("default", "syslog", "", udp, "10.96.0.21", 514, nodePort(30514), eps("10.244.1.3:514")),
		)},
		{name: "nodeport_etp_local", snap: snapshot(
			sp("default", "web", "http", tcp, "10.96.0.20", 80, nodePort(30080), etpLocal, eps("local:10.244.0.8:8080", "10.244.1.9:8080")),
			sp("default", "remote-only", "", udp, "10.96.0.22", 53, nodePort(30053), etpLocal, eps("10.244.1.4:53")),
		)},
		{name: "nodeport_sctp", snap: snapshot(sp("default", "sig", "", sctp, "10.96.0.23", 3868, nodePort(31868), eps("10.244.1.5:3868")))},
		{name: "nodeport_addresses", snap: snapshot(sp("default", "web", "", tcp, "10.96.0.20", 80, nodePort(30080), eps("10.244.1.9:8080"))),
			settings: func(s *Settings) { s.NodePortCIDRs = []netip.Prefix{prefix("192.168.0.0/24")} }},
		{name: "internal_traffic_policy_local", snap: snapshot(
			sp("default", "node-cache", "", udp, "10.96.0.30", 53, itpLocal, eps("local:10.244.0.9:53", "10.244.1.10:53")),
			sp("default", "nowhere", "", tcp, "10.96.0.31", 80, itpLocal, eps("10.244.1.11:80")),
		)},
		{name: "terminating_endpoints", snap: snapshot(
			sp("default", "rolling", "", tcp, "10.96.0.32", 80, eps("term:10.244.1.12:80", "term:local:10.244.0.13:80")),
		)},
		{name: "session_affinity_mh", snap: snapshot(
			sp("default", "sticky", "", tcp, "10.96.0.33", 80, clientIP(10800), nodePort(30033), eps("10.244.1.14:80", "10.244.2.14:80")),
		), settings: func(s *Settings) { s.Scheduler = "mh" }},
		{name: "external_ips", snap: snapshot(
			sp("default", "ext", "", tcp, "10.96.0.34", 80, externalIPs("203.0.113.5", "192.168.0.10"), eps("10.244.1.15:80")),
			sp("default", "ext-local", "", tcp, "10.96.0.35", 443, externalIPs("203.0.113.6"), etpLocal, eps("local:10.244.0.16:443", "10.244.1.16:443")),
		)},
		{name: "load_balancer", snap: snapshot(
			sp("default", "lb", "", tcp, "10.96.0.36", 80, nodePort(30036), loadBalancer("198.51.100.20", 0), eps("10.244.1.17:80")),
			sp("default", "lb-local", "", tcp, "10.96.0.37", 80, nodePort(30037), etpLocal, loadBalancer("198.51.100.21", 32000, "192.168.0.0/24"), eps("local:10.244.0.18:80")),
			sp("default", "lb-fw", "", udp, "10.96.0.38", 53, nodePort(30038), loadBalancer("198.51.100.22", 0, "203.0.113.0/24"), eps("10.244.1.19:53")),
		)},
		{name: "masquerade_all", snap: snapshot(kubeDNS()...), settings: func(s *Settings) { s.MasqueradeAll = true }},
		{name: "no_cluster_cidr", snap: snapshot(kubeDNS()...), settings: func(s *Settings) { s.LocalDetector = nil; s.RandomFully = false; s.MasqueradeBit = 15 }},
		{name: "no_node_addresses", snap: snapshot(sp("default", "web", "", tcp, "10.96.0.20", 80, nodePort(30080), loadBalancer("198.51.100.23", 31999), eps("10.244.1.9:8080"))),
			settings: func(s *Settings) { s.NodeAddresses = nil }},
	}
}

// TestComputeGolden renders each case's whole desired state and compares
// it with testdata/NAME.golden (go test -run TestComputeGolden -update
// rewrites them).
func TestComputeGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSettings()
			if tc.settings != nil {
				tc.settings(&s)
			}
			d := Compute(tc.snap, s)
			golden.Check(t, tc.name+".golden", []byte(d.String()))
			if again := Compute(tc.snap, s).String(); again != d.String() {
				t.Errorf("Compute is not deterministic")
			}
		})
	}
}

func TestComputeClusterIPBindsAndBalances(t *testing.T) {
	d := Compute(snapshot(kubeDNS()...), baseSettings())
	if got := d.Addresses; len(got) != 1 || got[0] != addr("10.96.0.10") {
		t.Errorf("kube-ipvs0 addresses = %v, want [10.96.0.10]", got)
	}
	if len(d.VirtualServers) != 2 {
		t.Fatalf("virtual servers = %d, want 2 (TCP and UDP port 53)", len(d.VirtualServers))
	}
	for _, vs := range d.VirtualServers {
		if vs.Scheduler != "rr" || len(vs.RealServers) != 2 {
			t.Errorf("%s: scheduler %q, %d real servers; want rr and 2", vs.Key(), vs.Scheduler, len(vs.RealServers))
		}
		for _, rs := range vs.RealServers {
			if rs.Weight != 1 {
				t.Errorf("%s: real server %s has weight %d, want 1", vs.Key(), rs.Key(), rs.Weight)
			}
		}
	}
	if got, want := d.Set(SetClusterIP).Entries, []string{"10.96.0.10,tcp:53", "10.96.0.10,udp:53"}; !slices.Equal(got, want) {
		t.Errorf("KUBE-CLUSTER-IP = %v, want %v", got, want)
	}
	if got, want := d.Set(SetLoopBack).Entries, []string{"10.244.0.5,tcp:53,10.244.0.5", "10.244.0.5,udp:53,10.244.0.5"}; !slices.Equal(got, want) {
		t.Errorf("KUBE-LOOP-BACK = %v, want %v", got, want)
	}
	if !strings.Contains(string(d.IPTables), `-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ`) {
		t.Errorf("payload lacks the KUBE-CLUSTER-IP masquerade rule:\n%s", d.IPTables)
	}
}

func TestComputeNodePortOnEveryNodeAddress(t *testing.T) {
	d := Compute(snapshot(sp("default", "web", "", corev1.ProtocolTCP, "10.96.0.20", 80, nodePort(30080), eps("10.244.1.9:8080"))), baseSettings())
	var keys []string
	for _, vs := range d.VirtualServers {
		keys = append(keys, vs.Key())
	}
	want := []string{"10.0.2.15:30080/TCP", "10.96.0.20:80/TCP", "192.168.0.10:30080/TCP"}
	if !slices.Equal(keys, want) {
		t.Errorf("virtual servers = %v, want %v", keys, want)
	}
	if got := d.Set(SetNodePortTCP).Entries; !slices.Equal(got, []string{"30080"}) {
		t.Errorf("KUBE-NODE-PORT-TCP = %v, want [30080]", got)
	}
	if slices.Contains(d.Addresses, nodeIP) {
		t.Errorf("node address %s bound to kube-ipvs0", nodeIP)
	}
}

func TestComputeLocalPolicyFallsBackToClusterEndpoints(t *testing.T) {
	// Upstream (kubernetes/kubernetes#97081): with externalTrafficPolicy
	// Local and no local endpoint, the node port still balances over all
	// endpoints so that local pods can use it.
	d := Compute(snapshot(sp("default", "remote", "", corev1.ProtocolTCP, "10.96.0.22", 80, nodePort(30022), etpLocal, eps("10.244.1.4:80"))), baseSettings())
	for _, vs := range d.VirtualServers {
		if len(vs.RealServers) != 1 {
			t.Errorf("%s: %d real servers, want the 1 remote endpoint", vs.Key(), len(vs.RealServers))
		}
	}
}

func TestComputeEmptySnapshotKeepsFixedRules(t *testing.T) {
	d := Compute(nil, baseSettings())
	if len(d.VirtualServers) != 0 || len(d.Addresses) != 0 {
		t.Fatalf("empty snapshot gave %d virtual servers and %d addresses", len(d.VirtualServers), len(d.Addresses))
	}
	if len(d.Sets) != len(Sets) {
		t.Errorf("sets = %d, want all %d", len(d.Sets), len(Sets))
	}
	for _, want := range []string{"-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000", "-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT"} {
		if !strings.Contains(string(d.IPTables), want+"\n") {
			t.Errorf("payload lacks %q", want)
		}
	}
}

func TestComputeUsesEndpointWeights(t *testing.T) {
	snap := snapshot(kubeDNS()...)
	for _, sp := range snap.ServicePorts {
		for i := range sp.Endpoints {
			sp.Endpoints[i].Weight = int32(3 * (i + 1)) // svclab.dev/endpoint-weights
		}
	}
	for _, vs := range Compute(snap, baseSettings()).VirtualServers {
		for i, rs := range vs.RealServers {
			if want := 3 * (i + 1); rs.Weight != want {
				t.Errorf("%s: real server %s weight %d, want %d", vs.Key(), rs.Key(), rs.Weight, want)
			}
		}
	}
}
