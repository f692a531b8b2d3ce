package network

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// AddVxlan creates a VXLAN device bound to an underlay device, with
// learning off: remote VTEPs are programmed statically (neighbour and FDB
// entries), as flannel and Calico do.
//
//	ip -n <NS> link add <Name> address <MAC> mtu <MTU> type vxlan id <VNI> local <Local> dev <Dev> dstport <Port> nolearning
type AddVxlan struct {
	NS, Name string
	VNI      int
	Port     int
	Local    netip.Addr
	Dev      string
	MTU      int
	MAC      net.HardwareAddr
}

func (s AddVxlan) Namespace() string { return s.NS }
func (s AddVxlan) Command() string {
	return fmt.Sprintf("ip -n %s link add %s address %s%s type vxlan id %d local %s dev %s dstport %d nolearning",
		s.NS, s.Name, s.MAC, mtuArg(s.MTU), s.VNI, s.Local, s.Dev, s.Port)
}

func (s AddVxlan) apply(x *executor) error {
	c, dev, err := x.link(s.NS, s.Dev)
	if err != nil {
		return err
	}
	return c.nl.LinkAdd(&netlink.Vxlan{
		LinkAttrs:    netlink.LinkAttrs{Name: s.Name, MTU: s.MTU, HardwareAddr: s.MAC},
		VxlanId:      s.VNI,
		VtepDevIndex: dev.Attrs().Index,
		SrcAddr:      net.IP(s.Local.AsSlice()),
		Port:         s.Port,
		Learning:     false,
	})
}
