package network

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// AddRoute adds a route to the main table.
//
//	ip -n <NS> route add <Dst|default> [via <Gw>] dev <Dev> [scope link] [onlink]
//	ip -n <NS> route add blackhole <Dst>
type AddRoute struct {
	NS string
	// Dst is the destination; the zero Prefix means default.
	Dst netip.Prefix
	// Gw is the next hop; the zero Addr means a directly connected route.
	Gw  netip.Addr
	Dev string
	// ScopeLink marks a route to a neighbour on Dev (169.254.1.1 dev eth0
	// scope link, 10.100.40.2/32 dev cali... scope link).
	ScopeLink bool
	// OnLink says Gw is on Dev even though no address of Dev covers it
	// (flannel's and Calico's routes through the VXLAN device).
	OnLink bool
	// Blackhole drops what matches Dst (Calico's route for its own block).
	Blackhole bool
}

func (s AddRoute) Namespace() string { return s.NS }
func (s AddRoute) Command() string {
	dst := "default"
	if s.Dst.IsValid() {
		dst = s.Dst.String()
	}
	if s.Blackhole {
		return fmt.Sprintf("ip -n %s route add blackhole %s", s.NS, dst)
	}
	cmd := fmt.Sprintf("ip -n %s route add %s", s.NS, dst)
	if s.Gw.IsValid() {
		cmd += " via " + s.Gw.String()
	}
	if s.Dev != "" {
		cmd += " dev " + s.Dev
	}
	if s.ScopeLink {
		cmd += " scope link"
	}
	if s.OnLink {
		cmd += " onlink"
	}
	return cmd
}

func (s AddRoute) apply(x *executor) error {
	c, err := x.conn(s.NS)
	if err != nil {
		return err
	}
	r := &netlink.Route{Scope: netlink.SCOPE_UNIVERSE}
	if s.Dst.IsValid() {
		r.Dst = ipNet(s.Dst.Masked())
	} else if s.Gw.Is6() {
		r.Dst = &net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}
	} else {
		r.Dst = &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}
	}
	if s.Blackhole {
		r.Type = unix.RTN_BLACKHOLE
		return c.nl.RouteAdd(r)
	}
	if s.Dev != "" {
		_, l, err := x.link(s.NS, s.Dev)
		if err != nil {
			return err
		}
		r.LinkIndex = l.Attrs().Index
	}
	if s.Gw.IsValid() {
		r.Gw = net.IP(s.Gw.AsSlice())
	}
	if s.ScopeLink {
		r.Scope = netlink.SCOPE_LINK
	}
	if s.OnLink {
		r.Flags = int(netlink.FLAG_ONLINK)
	}
	return c.nl.RouteAdd(r)
}
