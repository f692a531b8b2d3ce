package graph

import (
	"net/netip"

	"github.com/svclab/svclab/labs/netns/topology"
)

// Role is what a host of a lab is.
type Role string

const (
	RoleRouter Role = "router"
	RoleNode   Role = "node"
	RoleClient Role = "client"
	RolePod    Role = "pod"
)

// Graph is a lab's topology as built: hosts with their interfaces, and the
// links between interfaces.
type Graph struct {
	Lab string
	CNI topology.CNI
	// Hosts are the router, the nodes, the clients (in file order), then
	// the pods (by node in file order, then by name).
	Hosts []Host
	Links []Link
}

// Host is one network namespace of the lab.
type Host struct {
	Name      string
	Role      Role
	Namespace string
	// Node is the node a pod is attached to ("" for other hosts).
	Node       string
	Interfaces []Interface
	// Routes are the routes with a gateway, and blackhole routes, in plan
	// order (routes to a directly attached device are left out).
	Routes []Route
}

// IfKind is the type of an interface.
type IfKind string

const (
	IfVeth   IfKind = "veth"
	IfBridge IfKind = "bridge"
	IfVXLAN  IfKind = "vxlan"
)

// Interface is a link the plan creates in a host.
type Interface struct {
	Name  string
	Kind  IfKind
	Addrs []netip.Prefix
	// Master is the bridge a veth is a port of.
	Master string
	// ProxyARP is set when the plan enables proxy_arp on the interface.
	ProxyARP bool
	// PeerHost and PeerName name the other end of a veth.
	PeerHost, PeerName string
	// VXLAN holds a VXLAN device's parameters.
	VXLAN *VXLAN
}

// VXLAN is a VXLAN device's parameters.
type VXLAN struct {
	VNI, Port int
	Local     netip.Addr
	Dev       string
}

// Route is one route of a host.
type Route struct {
	Dst       netip.Prefix // invalid for the default route
	Gw        netip.Addr
	Dev       string
	Blackhole bool
}

// LinkKind is how two interfaces are joined.
type LinkKind string

const (
	// LinkVeth is a veth pair.
	LinkVeth LinkKind = "veth"
	// LinkVXLAN is a VXLAN tunnel between two VTEPs (FDB entries both ways
	// or one way), carried over the underlay.
	LinkVXLAN LinkKind = "vxlan"
)

// End is one end of a link.
type End struct{ Host, Interface string }

// Link joins two interfaces.
type Link struct {
	Kind LinkKind
	A, B End
}

// Host returns the host called name.
func (g *Graph) Host(name string) (*Host, bool) {
	for i := range g.Hosts {
		if g.Hosts[i].Name == name {
			return &g.Hosts[i], true
		}
	}
	return nil, false
}

// Interface returns h's interface called name.
func (h *Host) Interface(name string) (*Interface, bool) {
	for i := range h.Interfaces {
		if h.Interfaces[i].Name == name {
			return &h.Interfaces[i], true
		}
	}
	return nil, false
}

// DefaultGateway is the gateway of h's default route, if it has one.
func (h *Host) DefaultGateway() (netip.Addr, bool) {
	for _, r := range h.Routes {
		if !r.Dst.IsValid() && r.Gw.IsValid() {
			return r.Gw, true
		}
	}
	return netip.Addr{}, false
}
