package network

import (
	"net"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/roottest"
)

// TestIntegrationNeighMACGetsOneEntry: on the real kernel, neighMAC asks
// for the one entry of an address on a link: the MAC of a permanent entry,
// nil for an address without one, nil for the address on another link
// (the entry there is not the one asked for), and each of two links' own
// entry for the same address.
func TestIntegrationNeighMACGetsOneEntry(t *testing.T) {
	roottest.Require(t, "creates a network namespace with links and neighbour entries")
	ns := roottest.Netns(t, "svclabng")
	h := nl(t, ns)
	macA := net.HardwareAddr{0x02, 0, 0, 0, 0, 0xa1}
	macB := net.HardwareAddr{0x02, 0, 0, 0, 0, 0xb1}
	ip := netip.MustParseAddr("10.244.1.7")
	var links []netlink.Link
	for _, name := range []string{"brA", "brB", "brC"} {
		if err := h.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
			t.Fatal(err)
		}
		l := mustLink(t, h, ns, name)
		if err := h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
		links = append(links, l)
	}
	for i, mac := range []net.HardwareAddr{macA, macB} {
		if err := h.NeighAdd(&netlink.Neigh{LinkIndex: links[i].Attrs().Index, Family: unix.AF_INET,
			State: netlink.NUD_PERMANENT, IP: net.IP(ip.AsSlice()), HardwareAddr: mac}); err != nil {
			t.Fatal(err)
		}
	}
	x := newExecutor()
	defer x.close()
	route, err := x.routeSocket(ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		what string
		link int
		ip   string
		want net.HardwareAddr
	}{
		{"the entry on brA", 0, "10.244.1.7", macA},
		{"the entry on brB", 1, "10.244.1.7", macB},
		{"no entry on brC", 2, "10.244.1.7", nil},
		{"no entry for another address", 0, "10.244.1.8", nil},
	} {
		got, err := neighMAC(route, links[tt.link].Attrs().Index, netip.MustParseAddr(tt.ip))
		if err != nil {
			t.Errorf("%s: %v", tt.what, err)
		} else if got.String() != tt.want.String() {
			t.Errorf("%s: neighMAC = %q, want %q", tt.what, got, tt.want)
		}
	}
}
