package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/internal/labstore"
)

// golden compares v, as indented JSON, with testdata/name.
func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden.Check(t, name, got)
}

// TestParseNATCounters reads a real `iptables-save -c -t nat` of a
// single-node lab after 300 connections to nginx (testdata/nat-counters.save)
// into the KUBE chains in a packet's order, compared whole with
// testdata/nat-counters.golden; the ladder's counters add up to the
// Service's.
func TestParseNATCounters(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "nat-counters.save"))
	if err != nil {
		t.Fatal(err)
	}
	chains, err := ParseNATCounters(string(data))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "nat-counters.golden", chains)

	var names []string
	for _, c := range chains {
		names = append(names, c.Name)
		if !strings.HasPrefix(c.Name, "KUBE-") {
			t.Errorf("chain %s is not a KUBE chain", c.Name)
		}
	}
	if names[0] != "KUBE-SERVICES" || names[1] != "KUBE-NODEPORTS" || names[len(names)-1] != "KUBE-POSTROUTING" {
		t.Errorf("chain order %v", names)
	}
	svc := chains[3] // KUBE-EXT-…, then the nginx KUBE-SVC
	if svc.Name != "KUBE-SVC-2CMXP7HKUVJN7L6M" {
		t.Fatalf("chain 3 is %s", svc.Name)
	}
	var toEndpoints uint64
	for _, r := range svc.Rules {
		if strings.HasPrefix(r.Target, "KUBE-SEP-") {
			toEndpoints += r.Packets
			if !strings.HasPrefix(r.Comment, "default/nginx -> 10.244.1.") {
				t.Errorf("endpoint rule comment %q", r.Comment)
			}
		}
	}
	// KUBE-SERVICES' own counters start again at 0 with each full sync
	// (the proxy rewrites that chain); the Service's chain kept them.
	if toEndpoints != 300 || chains[0].Rules[0].Target != "KUBE-SVC-2CMXP7HKUVJN7L6M" {
		t.Errorf("the ladder's packets add up to %d, KUBE-SERVICES' first rule %+v; want 300 to the nginx chain", toEndpoints, chains[0].Rules[0])
	}
}

// TestParseNATCountersRefusesWhatIsNotIPTablesSave: one error naming the line.
func TestParseNATCountersRefusesWhatIsNotIPTablesSave(t *testing.T) {
	for in, want := range map[string]string{
		"*nat\n-A KUBE-X -j ACCEPT\n":          "line 2",
		"*nat\n[1:x] -A KUBE-X -j ACCEPT\n":    "bytes",
		"*nat\n[1:2]\n":                        "want [PACKETS:BYTES]",
		"*nat\n[1:2] -I KUBE-X -j ACCEPT\n":    "want -A CHAIN",
		"*nat\n[-1:2] -A KUBE-X -j ACCEPT\n":   "packets",
		"*nat\n:KUBE-X - [0:0]\nhello world\n": "line 3",
	} {
		if _, err := ParseNATCounters(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseNATCounters(%q) = %v, want an error with %q", in, err, want)
		}
	}
	// Other tables are skipped, quotes in comments kept whole.
	chains, err := ParseNATCounters("*filter\n:KUBE-FORWARD - [0:0]\n[1:2] -A KUBE-FORWARD -j ACCEPT\nCOMMIT\n*nat\n:KUBE-SVC-A - [0:0]\n" +
		`[7:420] -A KUBE-SVC-A -m comment --comment "ns/a:p \"q\" x" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-B` + "\nCOMMIT\n")
	if err != nil || len(chains) != 1 || len(chains[0].Rules) != 1 {
		t.Fatalf("chains %+v, %v", chains, err)
	}
	r := chains[0].Rules[0]
	if r.Packets != 7 || r.Bytes != 420 || r.Comment != `ns/a:p "q" x` || r.Target != "KUBE-SEP-B" ||
		r.Spec != "-m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-B" {
		t.Errorf("rule %+v", r)
	}
}

// TestParseIPVSStats reads ipvsadm -Ln --stats --exact, compared whole with
// testdata/ipvs-stats.golden.
func TestParseIPVSStats(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "ipvs-stats.txt"))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := ParseIPVSStats(string(data))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "ipvs-stats.golden", vs)
	if len(vs) != 4 || vs[0].Stats.Conns != 300 || len(vs[0].Real) != 3 || vs[0].Real[1].Stats.InPkts != 672 || len(vs[3].Real) != 0 {
		t.Errorf("virtual servers %+v", vs)
	}
	for in, want := range map[string]string{
		"  -> 10.0.0.1:80 0 0 0 0 0\n":     "before any virtual server",
		"TCP  10.0.0.1:80 1K 0 0 0 0\n":    "want an exact number",
		"TCP  10.0.0.1:80 0 0\n":           "5 counters",
		"TCP  10.0.0.1:80 0 0 0 0 0\nhm\n": "line 2",
	} {
		if _, err := ParseIPVSStats(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseIPVSStats(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

// TestServiceRefs: TCP ports of Services with a cluster IP, but the API
// server's and kube-system's.
func TestServiceRefs(t *testing.T) {
	svc := func(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
	}
	tcp := func(p int32) corev1.ServicePort { return corev1.ServicePort{Port: p, Protocol: corev1.ProtocolTCP} }
	st := &labstore.State{Services: []*corev1.Service{
		svc("default", "web", "10.96.0.20", tcp(80), tcp(8080), corev1.ServicePort{Port: 53, Protocol: corev1.ProtocolUDP}),
		svc("default", "kubernetes", "10.96.0.1", tcp(443)),
		svc("kube-system", "kube-dns", "10.96.0.10", tcp(53)),
		svc("default", "headless", corev1.ClusterIPNone, tcp(80)),
		svc("default", "external", "", tcp(80)),
		svc("apps", "api", "10.96.0.30", corev1.ServicePort{Port: 80}),
	}}
	got := ServiceRefs(st)
	want := []ServiceRef{{"apps/api:80", "10.96.0.30:80", ""}, {"default/web:80", "10.96.0.20:80", ""}, {"default/web:8080", "10.96.0.20:8080", ""}}
	if len(got) != len(want) {
		t.Fatalf("ServiceRefs = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ServiceRefs[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestServiceRefsDualStack: a Service with a cluster IP per family gives a
// ref per cluster IP (the other family's key says its family, its target
// is [IPv6]:port); an IPv6 single-stack Service keeps the plain key.
func TestServiceRefsDualStack(t *testing.T) {
	tcp80 := []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}
	svc := func(name string, ips ...string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.ServiceSpec{ClusterIP: ips[0], ClusterIPs: ips, Ports: tcp80}}
	}
	st := &labstore.State{Services: []*corev1.Service{
		svc("web", "10.96.0.11", "fd00:10:96::b"),
		svc("web6", "fd00:10:96::c"),
		svc("web64", "fd00:10:96::d", "10.96.0.13"),
	}}
	want := []ServiceRef{
		{"default/web64:80", "[fd00:10:96::d]:80", FamilyIPv6},
		{"default/web64:80 (IPv4)", "10.96.0.13:80", FamilyIPv4},
		{"default/web6:80", "[fd00:10:96::c]:80", ""},
		{"default/web:80", "10.96.0.11:80", FamilyIPv4},
		{"default/web:80 (IPv6)", "[fd00:10:96::b]:80", FamilyIPv6},
	}
	if got := ServiceRefs(st); !slices.Equal(got, want) {
		t.Errorf("ServiceRefs =\n%+v\nwant\n%+v", got, want)
	}
}

// TestParseIPVSStatsIPv6: ipvsadm lists a dual-stack node's IPv6 virtual
// and real servers as [ADDRESS]:PORT, kept as written beside the IPv4 ones.
func TestParseIPVSStatsIPv6(t *testing.T) {
	out := `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes
  -> RemoteAddress:Port
TCP  10.96.0.11:80                       0        0        0        0        0
  -> 10.244.1.3:8080                     0        0        0        0        0
TCP  [fd00:10:96::b]:80                 50      300      250    19500    36000
  -> [fd00:10:244:1::3]:8080            26      156      130    10140    18720
  -> [fd00:10:244:2::2]:8080            24      144      120     9360    17280
`
	vs, err := ParseIPVSStats(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []VirtualServer{
		{Protocol: "TCP", Address: "10.96.0.11:80", Real: []RealServer{{Address: "10.244.1.3:8080"}}},
		{Protocol: "TCP", Address: "[fd00:10:96::b]:80", Stats: IPVSStats{50, 300, 250, 19500, 36000}, Real: []RealServer{
			{Address: "[fd00:10:244:1::3]:8080", Stats: IPVSStats{26, 156, 130, 10140, 18720}},
			{Address: "[fd00:10:244:2::2]:8080", Stats: IPVSStats{24, 144, 120, 9360, 17280}},
		}},
	}
	if !reflect.DeepEqual(vs, want) {
		t.Errorf("ParseIPVSStats =\n%+v\nwant\n%+v", vs, want)
	}
}
