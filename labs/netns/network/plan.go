package network

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/podnet"
)

// Plan is what Build does to make a lab: the derived facts and the ordered
// steps. PlanLab makes it without touching the kernel.
type Plan struct {
	Lab    string
	CNI    topology.CNI
	Router Router
	// Hosts are the nodes, then the clients, in file order.
	Hosts []Host
	Steps []Step
	// meshFrom is where the nodes' overlay steps begin in Steps, and
	// meshEnds where each node's ends: each node's touch its own
	// namespace only, so Build runs them side by side.
	meshFrom int
	meshEnds []int
}

// Router is the lab's edge router: one bridge per distinct host subnet.
type Router struct {
	Namespace string
	LANs      []LAN
	// ServiceSubnet is routed via ServiceVia, the first node's address: the
	// router sends Service traffic to a node, as an edge router in front of
	// a cluster would.
	ServiceSubnet netip.Prefix
	ServiceVia    netip.Addr
	// ServiceSubnets are the Service subnets of every family, the
	// primary first, each routed via ServiceVias' address of its family
	// (the first node's).
	ServiceSubnets []netip.Prefix
	ServiceVias    []netip.Addr
	// LoadBalancerRoutes cover the lab's load balancer pool and its
	// external IP blocks (spec.loadBalancer.pool, spec.externalIPs). The
	// router sends them via ServiceVia too: the first node announces
	// every address, as the one elected speaker of MetalLB's layer 2 mode
	// does for an address, and the node's proxy takes the packet from
	// there.
	LoadBalancerRoutes []netip.Prefix
	// LoadBalancerVia is the first node's IPv4 address (the routes are
	// IPv4: ServiceVia in an IPv4-primary lab).
	LoadBalancerVia netip.Addr
}

// LAN is one underlay subnet: a bridge in the router, with the router's
// address on it.
type LAN struct {
	Bridge string
	Subnet netip.Prefix
	// Gateway is the router's address on the bridge and every host's
	// default route on this subnet: the subnet's last usable address, or
	// the next lower one not taken by a host.
	Gateway netip.Addr
	// Subnets and Gateways are the LAN's subnets of every family and the
	// router's address on each, the primary first (Subnet and Gateway).
	// A secondary subnet's gateway is picked as the primary's.
	Subnets  []netip.Prefix
	Gateways []netip.Addr
}

// Host is a node or a client as built.
type Host struct {
	Name      string
	Role      topology.HostRole
	Namespace string
	// IP is eth0's address with its prefix length.
	IP      netip.Prefix
	Gateway netip.Addr
	// IPs are eth0's addresses of every family and Gateways the default
	// route's next hop of each, the primary first (IP and Gateway).
	IPs      []netip.Prefix
	Gateways []netip.Addr
	// LAN is the router bridge eth0's peer is a port of; RouterPort is
	// that peer's name.
	LAN, RouterPort string
	// Node holds the pod-network facts of a node; nil for a client.
	Node *NodeNet
}

// NodeNet is the pod side of a node.
type NodeNet struct {
	PodCIDR netip.Prefix
	// PodMTU is the MTU of pods' eth0 and their node-side veths.
	PodMTU int
	// Bridge is the pod bridge ("cni0") with the bridge attachment, empty
	// with the Calico attachment.
	Bridge string
	// PodGateway is the pods' default gateway: the bridge's address (the
	// first address of PodCIDR) with the bridge attachment, 169.254.1.1
	// (an address nobody has; proxy ARP answers for it) with Calico's.
	PodGateway netip.Addr
	VTEP       VTEP
	// PodCIDRs, PodGateways and VTEPs are those of every family of the
	// lab, the primary first (PodCIDR, PodGateway and VTEP): with IPv6,
	// cni0 also holds the first address of the node's /64, Calico's pods
	// route through the link-local address of the node's cali* end, and
	// each family has its VXLAN device (flannel-v6.1, vxlan-v6.calico).
	PodCIDRs    []netip.Prefix
	PodGateways []netip.Addr
	VTEPs       []VTEP
}

// vtepOf is the node's VTEP of a's family.
func (n *NodeNet) vtepOf(a netip.Addr) (VTEP, bool) {
	for _, v := range n.VTEPs {
		if v.Addr.Is4() == a.Is4() {
			return v, true
		}
	}
	return VTEP{}, false
}

// familyIndex is the index in PodCIDRs (and PodGateways, VTEPs) of a's
// family.
func (n *NodeNet) familyIndex(a netip.Addr) (int, bool) {
	for i, c := range n.PodCIDRs {
		if c.Addr().Is4() == a.Is4() {
			return i, true
		}
	}
	return 0, false
}

// VTEP is a node's VXLAN endpoint.
type VTEP struct {
	Device string // flannel.1 or vxlan.calico
	VNI    int
	Port   int
	// Addr is the device's address (a /32 or a /128): the network
	// address of the node's pod range of the device's family.
	Addr netip.Addr
	MAC  net.HardwareAddr
	// Local is the node's underlay address, the outer source address.
	Local netip.Addr
	MTU   int
}

// Host returns the host called name.
func (p *Plan) Host(name string) (*Host, bool) {
	for i := range p.Hosts {
		if p.Hosts[i].Name == name {
			return &p.Hosts[i], true
		}
	}
	return nil, false
}

// Namespaces lists the namespaces the plan creates, in creation order.
func (p *Plan) Namespaces() []string { return createdNamespaces(p.Steps) }

// Script renders the plan as the shell script that builds the same lab.
func (p *Plan) Script() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# svclab lab %s (cni %s): what network.Build does, as commands.\nset -e\n", p.Lab, p.CNI)
	writeSteps(&b, p.Steps)
	return b.String()
}

func writeSteps(b *strings.Builder, steps []Step) {
	for _, s := range steps {
		b.WriteString(s.Command())
		b.WriteByte('\n')
	}
}

func createdNamespaces(steps []Step) []string {
	var names []string
	for _, s := range steps {
		if a, ok := s.(AddNetns); ok {
			names = append(names, a.Name)
		}
	}
	return names
}

// PlanLab resolves a lab into its plan: underlay, then each node's pod
// attachment, then the overlay between nodes. It is pure.
func PlanLab(lab *topology.Lab) (*Plan, error) {
	p, err := planHosts(lab)
	if err != nil {
		return nil, err
	}
	att, ov, err := parts(lab.Spec.CNI)
	if err != nil {
		return nil, err
	}
	for i := range p.Hosts {
		if h := &p.Hosts[i]; h.Node != nil {
			p.Steps = append(p.Steps, att.nodeSteps(h)...)
		}
	}
	var nodes []*Host
	for i := range p.Hosts {
		if p.Hosts[i].Node != nil {
			nodes = append(nodes, &p.Hosts[i])
		}
	}
	p.meshFrom = len(p.Steps)
	for _, self := range nodes {
		var peers []*Host
		for _, other := range nodes {
			if other != self {
				peers = append(peers, other)
			}
		}
		p.Steps = append(p.Steps, ov.nodeSteps(lab, self, peers)...)
		p.meshEnds = append(p.meshEnds, len(p.Steps))
	}
	return p, nil
}

// planHosts is the lab's plan up to its hosts: the underlay's steps and
// every host's facts (a node's pod network), without the nodes' pod
// attachment and overlay steps. A pod's plan needs no more; the overlay
// alone is 3·n·(n−1) steps, too many to make again for every pod.
func planHosts(lab *topology.Lab) (*Plan, error) {
	if err := lab.Validate(); err != nil {
		return nil, err
	}
	att, ov, err := parts(lab.Spec.CNI)
	if err != nil {
		return nil, err
	}
	p := &Plan{Lab: lab.Name(), CNI: lab.Spec.CNI}
	if err := planUnderlay(p, lab); err != nil {
		return nil, err
	}
	for i := range p.Hosts {
		h := &p.Hosts[i]
		if h.Role != topology.RoleNode {
			continue
		}
		n, _ := lab.Node(h.Name)
		h.Node = &NodeNet{PodCIDR: n.PodCIDR, PodMTU: podnet.PodMTU, PodCIDRs: n.PodCIDRs}
		if len(h.Node.PodCIDRs) == 0 {
			h.Node.PodCIDRs = []netip.Prefix{n.PodCIDR}
		}
		for _, cidr := range h.Node.PodCIDRs {
			local := topology.OfFamily(h.IPs, topology.FamilyOf(cidr.Addr())).Addr()
			h.Node.VTEPs = append(h.Node.VTEPs, ov.vtep(n.Name, cidr, local))
		}
		h.Node.VTEP = h.Node.VTEPs[0]
		for _, v := range h.Node.VTEPs {
			h.Node.PodMTU = min(h.Node.PodMTU, v.MTU) // the smallest of the encapsulations, as Felix's determinePodMTU
		}
		att.node(h)
	}
	return p, nil
}

// nsSteps create and tag a lab namespace and bring its lo up.
func nsSteps(ns string, t tag) []Step {
	return []Step{
		AddNetns{Name: ns},
		SetAlias{NS: ns, Link: "lo", Alias: t.String()},
		LinkUp{NS: ns, Link: "lo"},
	}
}
