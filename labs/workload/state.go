package workload

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// Cluster is what the workload logic needs to know of the lab: its nodes and
// the Service range, and which host names are taken by nodes and clients.
type Cluster struct {
	Nodes         []Node
	ServiceSubnet netip.Prefix
	// ReservedHostNames are names pods may not take (nodes, clients, the
	// router): every host of a lab is addressed by its name.
	ReservedHostNames []string

	// leaving are the pods of the state a change starts from: a pod that
	// the change removes keeps its address until the new pods run (the
	// lab starts new pods first), so a new pod may not take it.
	leaving []*corev1.Pod
}

// Node is one lab node as the scheduler and the IP allocator see it.
type Node struct {
	Name    string
	PodCIDR netip.Prefix
}
