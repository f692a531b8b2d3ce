package network

import (
	"fmt"

	"github.com/vishvananda/netlink"
)

// AddBridge creates a Linux bridge.
//
//	ip -n <NS> link add <Name> mtu <MTU> type bridge
type AddBridge struct {
	NS, Name string
	MTU      int
}

func (s AddBridge) Namespace() string { return s.NS }
func (s AddBridge) Command() string {
	return fmt.Sprintf("ip -n %s link add %s%s type bridge", s.NS, s.Name, mtuArg(s.MTU))
}

func (s AddBridge) apply(x *executor) error {
	c, err := x.conn(s.NS)
	if err != nil {
		return err
	}
	return c.nl.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: s.Name, MTU: s.MTU}})
}
