package workload

import (
	"net/netip"

	"github.com/svclab/svclab/labs/topology"
)

// Cluster is what the workload logic needs to know of the lab: its nodes and
// the Service range, and which host names are taken by nodes and clients.
type Cluster struct {
	Nodes         []Node
	ServiceSubnet netip.Prefix
	// LoadBalancerPool is where LoadBalancer Services get their address
	// (the lab file's spec.loadBalancer.pool); none when it is zero.
	LoadBalancerPool topology.AddrRange
	// ReservedHostNames are names pods may not take (nodes, clients, the
	// router): every host of a lab is addressed by its name.
	ReservedHostNames []string
}

// Node is one lab node as the scheduler and the IP allocator see it.
type Node struct {
	Name    string
	PodCIDR netip.Prefix
}
