package network

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// AddNeigh adds a permanent ARP entry: the remote VTEP's overlay address
// resolves to its MAC without any ARP on the overlay.
//
//	ip -n <NS> neigh add <IP> lladdr <MAC> dev <Dev> nud permanent
type AddNeigh struct {
	NS, Dev string
	IP      netip.Addr
	MAC     net.HardwareAddr
}

func (s AddNeigh) Namespace() string { return s.NS }
func (s AddNeigh) Command() string {
	return fmt.Sprintf("ip -n %s neigh add %s lladdr %s dev %s nud permanent", s.NS, s.IP, s.MAC, s.Dev)
}

func (s AddNeigh) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Dev)
	if err != nil {
		return err
	}
	return c.nl.NeighAdd(&netlink.Neigh{
		LinkIndex:    l.Attrs().Index,
		Family:       unix.AF_INET,
		State:        netlink.NUD_PERMANENT,
		IP:           net.IP(s.IP.AsSlice()),
		HardwareAddr: s.MAC,
	})
}

// AddFDB adds a permanent forwarding entry to a VXLAN device: frames for
// MAC are encapsulated towards the underlay address Dst.
//
//	bridge -n <NS> fdb add <MAC> dev <Dev> dst <Dst> self permanent
type AddFDB struct {
	NS, Dev string
	MAC     net.HardwareAddr
	Dst     netip.Addr
}

func (s AddFDB) Namespace() string { return s.NS }
func (s AddFDB) Command() string {
	return fmt.Sprintf("bridge -n %s fdb add %s dev %s dst %s self permanent", s.NS, s.MAC, s.Dev, s.Dst)
}

func (s AddFDB) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Dev)
	if err != nil {
		return err
	}
	return c.nl.NeighAdd(&netlink.Neigh{
		LinkIndex:    l.Attrs().Index,
		Family:       unix.AF_BRIDGE,
		State:        netlink.NUD_PERMANENT,
		Flags:        netlink.NTF_SELF,
		IP:           net.IP(s.Dst.AsSlice()),
		HardwareAddr: s.MAC,
	})
}
