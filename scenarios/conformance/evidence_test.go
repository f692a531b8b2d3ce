package conformance

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/scenarios/kit"
)

// evidenceService is a Service with a cluster IP and a node port.
func evidenceService(ns, name, clusterIP string, port, nodePort int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: clusterIP, ClusterIPs: []string{clusterIP},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: port, NodePort: nodePort}}},
	}
}

func readTestdata(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestIPTablesServiceRules: the rules of a node's iptables-save -c that
// concern one Service — those whose comment names it or that match its
// cluster IP, and every rule of the KUBE-SVC/EXT/SEP chains they lead
// to — with their counters, under their tables and chain declarations;
// not a Service whose name only starts with the same letters
// (ns1/web-other), not the shared chains (KUBE-MARK-MASQ, KUBE-SERVICES'
// other rules).
func TestIPTablesServiceRules(t *testing.T) {
	save := readTestdata(t, "evidence/iptables.save")
	svc := evidenceService("ns1", "web", "10.96.0.20", 80, 30080)
	got := iptablesServiceRules(save, svc, []netip.Addr{netip.MustParseAddr("10.96.0.20")})
	golden.Check(t, "evidence/iptables-web.golden", []byte(got))

	empty := evidenceService("ns1", "empty", "10.96.0.40", 80, 0)
	got = iptablesServiceRules(save, empty, []netip.Addr{netip.MustParseAddr("10.96.0.40")})
	want := "*filter\n:KUBE-SERVICES - [0:0]\n[0:0] -A KUBE-SERVICES -d 10.96.0.40/32 -p tcp -m comment --comment \"ns1/empty:http has no endpoints\" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable\n"
	if got != want {
		t.Errorf("a Service without endpoints: got\n%s\nwant\n%s", got, want)
	}

	if got := iptablesServiceRules("-A FOO\n", svc, nil); !strings.HasPrefix(got, "(iptables-save output not read: ") {
		t.Errorf("unreadable iptables-save output: got %q, want it to say it was not read", got)
	}
}

// TestNFTServiceObjects: the chains of kube-proxy's nftables table named
// for the Service, their rules, and the map and set elements that name
// its chains or its cluster IP; nothing of the other Service.
func TestNFTServiceObjects(t *testing.T) {
	table := readTestdata(t, "nft/endpoint-chains.json")
	svc := evidenceService("default", "two", "10.96.0.20", 80, 0)
	got := nftServiceObjects(table, svc, []netip.Addr{netip.MustParseAddr("10.96.0.20")})
	golden.Check(t, "evidence/nft-two.golden", []byte(got))
	if strings.Contains(got, "default/three") || strings.Contains(got, "10.96.0.30") {
		t.Errorf("the other Service's objects are in:\n%s", got)
	}
	if got := nftServiceObjects("nft: command not found", svc, nil); !strings.HasPrefix(got, "(nft -j output not read: ") {
		t.Errorf("unreadable nft output: got %q", got)
	}
}

// TestIPVSServiceEntries: the virtual servers at the Service's addresses
// and their real servers, not the others'.
func TestIPVSServiceEntries(t *testing.T) {
	list := "IP Virtual Server version 1.2.1 (size=4096)\n" +
		"Prot LocalAddress:Port Scheduler Flags\n" +
		"  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n" +
		"TCP  10.96.0.1:443 rr\n" +
		"  -> 172.18.0.2:6443             Masq    1      0          0\n" +
		"TCP  10.96.0.20:80 rr\n" +
		"  -> 10.244.1.5:8080             Masq    1      0          3\n" +
		"  -> 10.244.1.6:8080             Masq    1      0          2\n" +
		"TCP  172.18.0.3:30080 rr\n" +
		"  -> 10.244.1.5:8080             Masq    1      0          0\n" +
		"UDP  10.96.0.20:80 rr\n"
	addrs := []netip.AddrPort{netip.MustParseAddrPort("10.96.0.20:80"), netip.MustParseAddrPort("172.18.0.3:30080")}
	want := "TCP  10.96.0.20:80 rr\n" +
		"  -> 10.244.1.5:8080             Masq    1      0          3\n" +
		"  -> 10.244.1.6:8080             Masq    1      0          2\n" +
		"TCP  172.18.0.3:30080 rr\n" +
		"  -> 10.244.1.5:8080             Masq    1      0          0\n" +
		"UDP  10.96.0.20:80 rr\n"
	if got := ipvsServiceEntries(list, addrs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestServiceAddrPortsAndFlows: a Service's addresses are its cluster IP
// and each node's address at its node port; the flows kept are those
// sent to one of them, printed with their NAT bits.
func TestServiceAddrPortsAndFlows(t *testing.T) {
	svc := evidenceService("ns1", "web", "10.96.0.20", 80, 30080)
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.168.100.10"}}
	nodes := []kit.Node{{Name: "a", IP: netip.MustParseAddr("172.18.0.2")}, {Name: "b"}}
	addrs := serviceAddrPorts(svc, nodes)
	if got, want := describeAddrs(addrs), "10.96.0.20:80, 192.168.100.10:80, 172.18.0.2:30080"; got != want {
		t.Errorf("addresses: got %s, want %s", got, want)
	}
	dnat := conntrack.Flow{Proto: 6, Orig: conntrack.Tuple{Src: netip.MustParseAddrPort("10.244.1.9:40000"), Dst: netip.MustParseAddrPort("10.96.0.20:80")},
		Reply: conntrack.Tuple{Src: netip.MustParseAddrPort("10.244.1.5:8080"), Dst: netip.MustParseAddrPort("10.244.1.9:40000")}, Status: conntrack.StatusDstNAT}
	other := dnat
	other.Orig.Dst = netip.MustParseAddrPort("10.96.0.30:80")
	got := serviceFlows([]conntrack.Flow{dnat, other}, addrs)
	if len(got) != 1 || !strings.Contains(got[0], "dst=10.96.0.20") || !strings.Contains(got[0], "[DNAT]") {
		t.Errorf("flows: got %q, want the one to 10.96.0.20:80 with its DNAT bit", got)
	}
}

// TestSpecDirName: a spec's full text as one directory name, bounded.
func TestSpecDirName(t *testing.T) {
	for in, want := range map[string]string{
		"two-pod 50/50 split splits connections from a pod 50/50, each one counted and tracked": "two-pod-50-50-split-splits-connections-from-a-pod-50-50-each-one-counted-and-tracked",
		"[sig] ../../etc":          "sig-etc",
		"///":                      "spec",
		strings.Repeat("ab ", 100): strings.TrimRight(strings.Repeat("ab-", 40), "-"),
	} {
		if got := specDirName(in); got != want {
			t.Errorf("specDirName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBoundLines: the JUnit report holds the first lines and says how
// many more the artifacts have.
func TestBoundLines(t *testing.T) {
	if got := boundLines("a\nb\n", 2); got != "a\nb\n" {
		t.Errorf("within the bound: %q", got)
	}
	if got, want := boundLines("a\nb\nc\nd\n", 2), "a\nb\n… 2 more lines (all of them under --artifacts)\n"; got != want {
		t.Errorf("over the bound: got %q, want %q", got, want)
	}
}
