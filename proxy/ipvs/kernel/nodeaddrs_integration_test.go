package kernel

import (
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/roottest"
)

// bridgeAt makes a bridge (this kernel has no dummy devices) in the
// namespace h reaches.
func bridgeAt(t *testing.T, h *netlink.Handle, name string) netlink.Link {
	t.Helper()
	if err := h.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
		t.Fatal(err)
	}
	l, err := h.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func addrAt(t *testing.T, h *netlink.Handle, l netlink.Link, add bool, ips ...string) {
	t.Helper()
	for _, s := range ips {
		a := mustAddr(s)
		ipnet := &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(a.BitLen(), a.BitLen())}
		op := h.AddrAdd
		if !add {
			op = h.AddrDel
		}
		if err := op(l, &netlink.Addr{IPNet: ipnet}); err != nil {
			t.Fatalf("%s %v: %v", s, add, err)
		}
	}
}

// dumpedExcept is what one dump of every address says NodeAddresses
// should return (the way it was computed before the cache).
func dumpedExcept(t *testing.T, h *netlink.Handle, skip int) []netip.Addr {
	t.Helper()
	addrs, err := h.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Addr
	for _, a := range addrs {
		ip, _ := netip.AddrFromSlice(a.IP)
		if ip = ip.Unmap(); a.LinkIndex != skip && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
			out = append(out, ip)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out)
}

// NodeAddresses, kept from the kernel's notifications, says at every call
// what a dump of every address says, without the excepted link's: after
// additions and removals on both, a link deleted, and notifications lost to
// a full socket buffer (it dumps again).
func TestIntegrationNodeAddressesFollowTheKernel(t *testing.T) {
	roottest.Require(t, "creates a network namespace")
	name := roottest.Netns(t, "svclab-nodeaddrs")
	k, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ipvs := bridgeAt(t, h, "kube-ipvs0")
	eth := bridgeAt(t, h, "eth0")
	addrAt(t, h, eth, true, "192.168.0.2", "fd00::2")
	addrAt(t, h, ipvs, true, "10.96.0.1", "10.96.0.10")
	check := func(when string) {
		t.Helper()
		got, err := k.NodeAddresses("kube-ipvs0")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if want := dumpedExcept(t, h, ipvs.Attrs().Index); !slices.Equal(got, want) {
			t.Errorf("%s: NodeAddresses = %v, a dump says %v", when, got, want)
		}
	}
	check("first call")
	if got, _ := k.NodeAddresses("kube-ipvs0"); !slices.Equal(got, []netip.Addr{mustAddr("192.168.0.2"), mustAddr("fd00::2")}) {
		t.Errorf("NodeAddresses = %v, want eth0's two", got)
	}
	addrAt(t, h, eth, true, "192.168.0.3")
	addrAt(t, h, eth, false, "fd00::2")
	addrAt(t, h, ipvs, true, "10.96.0.11")
	check("after changes")
	other := bridgeAt(t, h, "eth1")
	addrAt(t, h, other, true, "172.16.0.1")
	check("with another link")
	if err := h.LinkDel(other); err != nil {
		t.Fatal(err)
	}
	check("after the link's delete")

	// Overflow the socket: notifications are lost, the next call dumps.
	before := k.addrs.sock
	if err := before.SetReceiveBufferSize(0, false); err != nil {
		t.Fatal(err)
	}
	var many []string
	for i := range 600 {
		many = append(many, netip.AddrFrom4([4]byte{10, 97, byte(i / 250), byte(i%250 + 1)}).String())
	}
	addrAt(t, h, eth, true, many...)
	addrAt(t, h, eth, false, many[:300]...)
	check("after lost notifications")
	if k.addrs.sock == before {
		t.Error("no notification was lost: the test did not overflow the socket")
	}
	if got, _ := k.NodeAddresses("kube-ipvs0"); len(got) != 2+300 {
		t.Errorf("after lost notifications: %d addresses, want eth0's 302", len(got))
	}
}
