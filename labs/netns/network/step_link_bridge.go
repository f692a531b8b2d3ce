package network

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
)

// AddBridge creates a Linux bridge.
//
//	ip -n <NS> link add <Name> [address <MAC>] mtu <MTU> type bridge
type AddBridge struct {
	NS, Name string
	MTU      int
	// MAC, when set, is the bridge's MAC for good. Without it the kernel
	// gives the bridge the lowest MAC of its ports, which changes as ports
	// come and go; every change flushes the bridge's neighbour entries
	// and leaves whoever resolved the old MAC (the pods, for their
	// gateway) sending to an address no port answers.
	MAC net.HardwareAddr
}

func (s AddBridge) Namespace() string { return s.NS }
func (s AddBridge) Command() string {
	addr := ""
	if s.MAC != nil {
		addr = " address " + s.MAC.String()
	}
	return fmt.Sprintf("ip -n %s link add %s%s%s type bridge", s.NS, s.Name, addr, mtuArg(s.MTU))
}

func (s AddBridge) apply(x *executor) error {
	c, err := x.conn(s.NS)
	if err != nil {
		return err
	}
	return c.nl.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: s.Name, MTU: s.MTU, HardwareAddr: s.MAC}})
}
