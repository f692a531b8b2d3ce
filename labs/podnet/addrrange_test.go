package podnet

import (
	"net/netip"
	"testing"
)

// TestAddrRangePrefixesCoverExactly checks Prefixes on every range of a
// small window: the prefixes are disjoint, in order, and cover exactly the
// range.
func TestAddrRangePrefixesCoverExactly(t *testing.T) {
	base := u32(netip.MustParseAddr("10.0.0.0"))
	for lo := uint32(0); lo < 40; lo++ {
		for hi := lo; hi < 40; hi++ {
			r := AddrRange{First: addr4(base + lo), Last: addr4(base + hi)}
			next := r.First
			for _, p := range r.Prefixes() {
				if p.Addr() != next || p != p.Masked() {
					t.Fatalf("%v: prefix %v, want one starting at %v", r, p, next)
				}
				next = Broadcast(p).Next()
			}
			if next != r.Last.Next() {
				t.Fatalf("%v: prefixes end before %v", r, next)
			}
		}
	}
	full := AddrRange{First: netip.MustParseAddr("0.0.0.0"), Last: netip.MustParseAddr("255.255.255.255")}
	if got := full.Prefixes(); len(got) != 1 || got[0].Bits() != 0 {
		t.Errorf("the whole space: %v", got)
	}
}

func TestBroadcastIsThePrefixsLastAddress(t *testing.T) {
	for p, want := range map[string]string{
		"10.244.1.0/24":       "10.244.1.255",
		"192.168.16.73/20":    "192.168.31.255",
		"fd00:10:244::/56":    "fd00:10:244:ff:ffff:ffff:ffff:ffff",
		"fd00::c0a8:1049/116": "fd00::c0a8:1fff",
		"fd00::1/128":         "fd00::1",
	} {
		if got := Broadcast(netip.MustParsePrefix(p)).String(); got != want {
			t.Errorf("Broadcast(%s) = %s, want %s", p, got, want)
		}
	}
}
