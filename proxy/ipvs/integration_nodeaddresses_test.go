package ipvs

import (
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/svclab/svclab/internal/roottest"
)

// TestIntegrationNodeAddresses checks, in a real kernel (no IPVS needed),
// that the node's addresses are every link's IPv4 and IPv6 addresses but
// the excepted device's, loopback ones and IPv6 link-local ones, read with
// one address dump, and that a device's addresses leave out link-local
// ones too (upstream's isValidForSet).
func TestIntegrationNodeAddresses(t *testing.T) {
	roottest.Require(t, "creates network namespaces and veth devices in them")
	ns := newTestNetns(t)
	h := nlHandle(t, ns)
	// veth pairs, as this host's kernel may lack the dummy driver: the
	// excepted device is one end of a pair.
	for name, peer := range map[string]string{DummyDevice: "node0", "node1": "node2"} {
		if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer}); err != nil {
			t.Fatalf("ip link add %s type veth peer %s: %v", name, peer, err)
		}
	}
	for _, a := range []struct{ dev, cidr string }{
		{DummyDevice, "10.96.0.1/32"}, {DummyDevice, "fd00:10:96::1/128"}, {DummyDevice, "fe80::1/64"},
		{"node0", "10.0.0.5/24"}, {"node0", "fd00:1::5/64"}, {"node1", "10.0.1.5/24"}, {"node1", "fe80::5/64"},
	} {
		link, err := h.LinkByName(a.dev)
		if err != nil {
			t.Fatal(err)
		}
		ip, ipnet, _ := net.ParseCIDR(a.cidr)
		ipnet.IP = ip
		if err := h.AddrAdd(link, &netlink.Addr{IPNet: ipnet, Flags: 0x02}); err != nil { // IFA_F_NODAD
			t.Fatalf("ip addr add %s dev %s: %v", a.cidr, a.dev, err)
		}
	}
	k := openKernel(t, ns)
	got, err := k.NodeAddresses(DummyDevice)
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Addr{addr("10.0.0.5"), addr("10.0.1.5"), addr(itNodeIP), addr("fd00:1::5")}
	if !slices.Equal(got, want) {
		t.Errorf("NodeAddresses(%s) = %v, want %v", DummyDevice, got, want)
	}
	got, err = k.NodeAddresses("no-such-device")
	if err != nil || len(got) != 6 {
		t.Errorf("NodeAddresses(no-such-device) = %v, %v; want all six addresses that are neither loopback nor link-local", got, err)
	}
	bound, exists, err := k.Addresses(DummyDevice)
	if want := []netip.Addr{addr("10.96.0.1"), addr("fd00:10:96::1")}; err != nil || !exists || !slices.Equal(bound, want) {
		t.Errorf("Addresses(%s) = %v, %v, %v; want %v", DummyDevice, bound, exists, err, want)
	}
}
