package network

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// AddAddr puts an address on a link.
//
//	ip -n <NS> addr add <Addr> dev <Link>
type AddAddr struct {
	NS, Link string
	// Addr is the address with its prefix length, e.g. 10.244.1.1/24.
	Addr netip.Prefix
}

func (s AddAddr) Namespace() string { return s.NS }
func (s AddAddr) Command() string {
	return fmt.Sprintf("ip -n %s addr add %s dev %s", s.NS, s.Addr, s.Link)
}

func (s AddAddr) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Link)
	if err != nil {
		return err
	}
	return c.nl.AddrAdd(l, &netlink.Addr{IPNet: ipNet(s.Addr)})
}

// ipNet converts a prefix, keeping its host bits (10.244.1.1/24 stays so).
func ipNet(p netip.Prefix) *net.IPNet {
	bits := 32
	if p.Addr().Is6() {
		bits = 128
	}
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), bits)}
}
