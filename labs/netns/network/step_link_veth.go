package network

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
)

// AddVeth creates a veth pair with one end, Name, in NS and the other end,
// PeerName, directly in PeerNS (so no name ever clashes on the way).
//
//	ip -n <NS> link add <Name> mtu <MTU> type veth peer name <PeerName> mtu <MTU> [address <PeerMAC>] netns <PeerNS>
type AddVeth struct {
	NS, Name         string
	MTU              int
	PeerNS, PeerName string
	// PeerMAC is the peer's MAC; nil lets the kernel pick one.
	PeerMAC net.HardwareAddr
}

func (s AddVeth) Namespace() string { return s.NS }
func (s AddVeth) Command() string {
	addr := ""
	if s.PeerMAC != nil {
		addr = " address " + s.PeerMAC.String()
	}
	return fmt.Sprintf("ip -n %s link add %s%s type veth peer name %s%s%s netns %s",
		s.NS, s.Name, mtuArg(s.MTU), s.PeerName, mtuArg(s.MTU), addr, s.PeerNS)
}

func (s AddVeth) apply(x *executor) error {
	c, err := x.conn(s.NS)
	if err != nil {
		return err
	}
	peer, err := x.conn(s.PeerNS)
	if err != nil {
		return err
	}
	return c.nl.LinkAdd(&netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: s.Name, MTU: s.MTU},
		PeerName:         s.PeerName,
		PeerMTU:          uint32(s.MTU),
		PeerHardwareAddr: s.PeerMAC,
		PeerNamespace:    netlink.NsFd(int(peer.ns)),
	})
}
