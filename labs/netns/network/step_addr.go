package network

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// AddAddr puts an address on a link.
//
//	ip -n <NS> addr add <Addr> dev <Link> [nodad]
type AddAddr struct {
	NS, Link string
	// Addr is the address with its prefix length, e.g. 10.244.1.1/24.
	Addr netip.Prefix
	// NoDAD skips IPv6 duplicate address detection (IFA_F_NODAD): the
	// address is usable at once instead of tentative for a second, so a
	// test that uses it right after the lab is built does not race DAD.
	NoDAD bool
}

func (s AddAddr) Namespace() string { return s.NS }
func (s AddAddr) Command() string {
	cmd := fmt.Sprintf("ip -n %s addr add %s dev %s", s.NS, s.Addr, s.Link)
	if s.NoDAD {
		cmd += " nodad"
	}
	return cmd
}

func (s AddAddr) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Link)
	if err != nil {
		return err
	}
	a := &netlink.Addr{IPNet: ipNet(s.Addr)}
	if s.NoDAD {
		a.Flags = unix.IFA_F_NODAD
	}
	return c.nl.AddrAdd(l, a)
}

// ipNet converts a prefix, keeping its host bits (10.244.1.1/24 stays so).
func ipNet(p netip.Prefix) *net.IPNet {
	bits := 32
	if p.Addr().Is6() {
		bits = 128
	}
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), bits)}
}
