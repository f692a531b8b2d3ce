package iptablestest

import (
	"net/netip"
	"slices"
	"testing"
)

func traceOf(t *testing.T, rules string, p Packet, nodeIPs ...string) Result {
	t.Helper()
	f := NewFakeRunner()
	if err := f.Restore([]byte(rules)); err != nil {
		t.Fatalf("restore: %v", err)
	}
	var ips []netip.Addr
	for _, s := range nodeIPs {
		ips = append(ips, netip.MustParseAddr(s))
	}
	return (&Tracer{Dump: f.Dump(), NodeIPs: ips}).Trace(p)
}

func pkt(src, dst string, port int) Packet {
	return Packet{Source: netip.MustParseAddr(src), Destination: netip.MustParseAddr(dst), DestinationPort: port}
}

const traceNAT = `*nat
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC - [0:0]
:KUBE-SEP-1 - [0:0]
:KUBE-SEP-2 - [0:0]
:KUBE-SEP-3 - [0:0]
-A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000
-A KUBE-POSTROUTING -j MASQUERADE
-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000
-A KUBE-SERVICES -m tcp -p tcp -d 10.96.0.1/32 --dport 80 -j KUBE-SVC
-A KUBE-SERVICES -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 30000 -j KUBE-SVC
-A KUBE-SVC -i veth+ -j RETURN
-A KUBE-SVC ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ
-A KUBE-SVC -m statistic --mode random --probability 0.3333333333 -j KUBE-SEP-1
-A KUBE-SVC -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-2
-A KUBE-SVC -j KUBE-SEP-3
-A KUBE-SEP-1 -s 10.244.1.1 -j KUBE-MARK-MASQ
-A KUBE-SEP-1 -m tcp -p tcp -j DNAT --to-destination 10.244.1.1:8080
-A KUBE-SEP-2 -m tcp -p tcp -j DNAT --to-destination 10.244.1.2:8080
-A KUBE-SEP-3 -m tcp -p tcp -j DNAT --to-destination 10.244.1.3:8080
COMMIT
`

func TestTracerFollowsEveryBranchOfTheProbabilityLadder(t *testing.T) {
	res := traceOf(t, traceNAT, pkt("10.244.9.9", "10.96.0.1", 80))
	want := []string{"10.244.1.1:8080", "10.244.1.2:8080", "10.244.1.3:8080"}
	if got := res.Destinations(); !slices.Equal(got, want) {
		t.Fatalf("destinations = %v, want %v\n%s", got, want, res)
	}
	if len(res.Paths) != 3 {
		t.Errorf("want exactly one path per endpoint, got %d\n%s", len(res.Paths), res)
	}
	if res.AnyMasqueraded() {
		t.Errorf("pod source must not be masqueraded\n%s", res)
	}
}

func TestTracerMasqueradesThroughTheMark(t *testing.T) {
	res := traceOf(t, traceNAT, pkt("203.0.113.1", "10.96.0.1", 80))
	if !res.AllMasqueraded() {
		t.Errorf("outside source must be masqueraded on every path\n%s", res)
	}
	// Hairpin: only the path back to the sender sets the mark in KUBE-SEP.
	res = traceOf(t, traceNAT, pkt("10.244.1.1", "10.96.0.1", 80))
	if !res.MasqueradedTo("10.244.1.1:8080") || res.MasqueradedTo("10.244.1.2:8080") {
		t.Errorf("hairpin must be masqueraded only towards itself\n%s", res)
	}
}

func TestTracerMatchesLocalAddressesAndInterfaces(t *testing.T) {
	// dst-type LOCAL: a node IP, or any address flagged DestinationLocal.
	if got := traceOf(t, traceNAT, pkt("203.0.113.1", "192.168.0.10", 30000), "192.168.0.10").Destinations(); len(got) != 3 {
		t.Errorf("node IP must match --dst-type LOCAL, got %v", got)
	}
	p := pkt("203.0.113.1", "192.168.7.7", 30000)
	if got := traceOf(t, traceNAT, p).Destinations(); len(got) != 0 {
		t.Errorf("non-local address must not match, got %v", got)
	}
	p.DestinationLocal = true
	if got := traceOf(t, traceNAT, p).Destinations(); len(got) != 3 {
		t.Errorf("DestinationLocal must match --dst-type LOCAL, got %v", got)
	}
	// -i veth+ RETURNs before anything is chosen.
	p = pkt("10.244.9.9", "10.96.0.1", 80)
	p.InInterface = "veth1234"
	res := traceOf(t, traceNAT, p)
	if len(res.Destinations()) != 0 || len(res.Paths) != 1 || res.Paths[0].Verdict != "ACCEPT" {
		t.Errorf("RETURN must leave the packet untranslated and accepted\n%s", res)
	}
}

func TestTracerFilterVerdicts(t *testing.T) {
	rules := traceNAT + `*filter
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
-A KUBE-SERVICES -m tcp -p tcp -d 10.96.0.9 --dport 80 -j REJECT
-A KUBE-EXTERNAL-SERVICES -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 30009 -j DROP
-A KUBE-NODEPORTS -m tcp -p tcp --dport 30010 -j ACCEPT
COMMIT
`
	if res := traceOf(t, rules, pkt("10.244.9.9", "10.96.0.9", 80)); !res.Rejected() || res.Dropped() {
		t.Errorf("want REJECT\n%s", res)
	}
	if res := traceOf(t, rules, pkt("203.0.113.1", "192.168.0.10", 30009), "192.168.0.10"); !res.Dropped() {
		t.Errorf("want DROP\n%s", res)
	}
	res := traceOf(t, rules, pkt("203.0.113.1", "192.168.0.10", 30010), "192.168.0.10")
	if res.Dropped() || res.Rejected() || res.Paths[0].Verdict != "ACCEPT" {
		t.Errorf("want ACCEPT\n%s", res)
	}
	// Protocol mismatch: nothing happens.
	p := pkt("10.244.9.9", "10.96.0.9", 80)
	p.Protocol = "udp"
	if res := traceOf(t, rules, p); res.Rejected() {
		t.Errorf("udp must not hit the tcp REJECT\n%s", res)
	}
}
