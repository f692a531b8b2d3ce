package kit

import (
	"net/netip"
	"os"
	"testing"

	"github.com/svclab/svclab/labs/agents/conntrack"
)

// testdata/conntrack-ipv6.txt is `conntrack -L` (conntrack-tools 1.4.7)
// in a test network namespace: a connection DNATed by an ip6tables rule
// and MASQUERADEd (--to-ports 50000) to its own address, in TIME_WAIT; an
// entry inserted with `conntrack -I` and no reply yet; an IPv4 one.
func TestParseConntrackList(t *testing.T) {
	text, err := os.ReadFile("testdata/conntrack-ipv6.txt")
	if err != nil {
		t.Fatal(err)
	}
	flows, err := ParseConntrackList("conntrack v1.4.7 (conntrack-tools): 3 flow entries have been shown.\n" + string(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 3 {
		t.Fatalf("%d flows, want 3: %v", len(flows), flows)
	}
	ap := netip.MustParseAddrPort
	natted := flows[0]
	if natted.Proto != 6 || natted.TCPStateName() != "TIME_WAIT" || natted.Timeout != 119 {
		t.Errorf("first entry %v: want tcp TIME_WAIT 119", natted)
	}
	if natted.Orig != (conntrack.Tuple{Src: ap("[fd00:10:244:1::5]:40000"), Dst: ap("[fd00:10:96::a]:80")}) ||
		natted.Reply != (conntrack.Tuple{Src: ap("[fd00:10:244:1::5]:8080"), Dst: ap("[fd00:10:244:1::5]:50000")}) {
		t.Errorf("first entry's tuples: %v", natted)
	}
	if !natted.DstNAT() || !natted.SrcNAT() || natted.Status&conntrack.StatusAssured == 0 || natted.Status&conntrack.StatusSeenReply == 0 {
		t.Errorf("first entry %v (status %b): want DNAT, SNAT, assured, seen reply", natted, natted.Status)
	}
	unreplied := flows[1]
	if unreplied.Status&conntrack.StatusSeenReply != 0 || unreplied.Status&conntrack.StatusAssured != 0 || unreplied.TCPStateName() != "ESTABLISHED" {
		t.Errorf("second entry %v (status %b): want unreplied, not assured, ESTABLISHED", unreplied, unreplied.Status)
	}
	if v4 := flows[2]; v4.Orig.Src != ap("10.244.1.5:40001") || !v4.DstNAT() || v4.SrcNAT() {
		t.Errorf("IPv4 entry %v: want DNAT only from 10.244.1.5:40001", v4)
	}
}

func TestParseConntrackListRefusesAHalfEntry(t *testing.T) {
	if _, err := ParseConntrackList("tcp 6 10 ESTABLISHED src=fd00::1 dst=fd00::2 sport=1 dport=2 mark=0\n"); err == nil {
		t.Error("an entry with one tuple parsed")
	}
}
