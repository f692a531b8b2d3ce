package workload

import (
	"math/rand/v2"
	"net/netip"
	"runtime"

	"github.com/svclab/svclab/labs/podnet"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Cluster is what the workload logic needs to know of the lab: its nodes and
// the Service range, and which host names are taken by nodes and clients.
type Cluster struct {
	Nodes         []Node
	ServiceSubnet netip.Prefix
	// LoadBalancerPool is where LoadBalancer Services get their address
	// (the lab file's spec.loadBalancer.pool); none when it is zero.
	LoadBalancerPool podnet.AddrRange
	// ReservedHostNames are names pods may not take (nodes, clients, the
	// router): every host of a lab is addressed by its name.
	ReservedHostNames []string
	// Rand makes generated pod names repeatable (nil: random).
	Rand *rand.Rand

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

// Labels are the labels the kubelet gives its node: a lab's nodes are
// linux/amd64 workers named after their host.
func (n Node) Labels() labels.Set {
	return labels.Set{
		corev1.LabelHostname:   n.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: runtime.GOARCH,
	}
}
