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
// that the node's addresses are every link's IPv4 addresses but the
// excepted device's and loopback ones, read with one address dump.
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
	for name, cidr := range map[string]string{DummyDevice: "10.96.0.1/32", "node0": "10.0.0.5/24", "node1": "10.0.1.5/24"} {
		link, err := h.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		ip, ipnet, _ := net.ParseCIDR(cidr)
		ipnet.IP = ip
		if err := h.AddrAdd(link, &netlink.Addr{IPNet: ipnet}); err != nil {
			t.Fatalf("ip addr add %s dev %s: %v", cidr, name, err)
		}
	}
	k := openKernel(t, ns)
	got, err := k.NodeAddresses(DummyDevice)
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Addr{addr("10.0.0.5"), addr("10.0.1.5"), addr(itNodeIP)}
	if !slices.Equal(got, want) {
		t.Errorf("NodeAddresses(%s) = %v, want %v", DummyDevice, got, want)
	}
	got, err = k.NodeAddresses("no-such-device")
	if err != nil || len(got) != 4 {
		t.Errorf("NodeAddresses(no-such-device) = %v, %v; want all four addresses", got, err)
	}
}
