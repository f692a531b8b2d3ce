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
// the Service ranges, and which host names are taken by nodes and clients.
type Cluster struct {
	Nodes []Node
	// ServiceSubnet is the primary Service range (ServiceSubnets[0]).
	ServiceSubnet netip.Prefix
	// ServiceSubnets are the Service ranges, one per IP family of the
	// lab, primary first (the API server's --service-cluster-ip-range);
	// empty means ServiceSubnet alone.
	ServiceSubnets []netip.Prefix
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
	Name string
	// PodCIDR is the node's primary pod CIDR (PodCIDRs[0]).
	PodCIDR netip.Prefix
	// PodCIDRs are the node's pod CIDRs, one per IP family, primary
	// first (the Node's spec.podCIDRs); empty means PodCIDR alone.
	PodCIDRs []netip.Prefix
	// IPs are the node's addresses, primary first: a hostNetwork pod's
	// IPs. Empty: a hostNetwork pod gets pod IPs like any other pod
	// (the netns lab runs every pod in a namespace of its own).
	IPs []netip.Addr
}

// podCIDRs are the node's pod CIDRs, primary first.
func (n Node) podCIDRs() []netip.Prefix {
	if len(n.PodCIDRs) > 0 {
		return n.PodCIDRs
	}
	return []netip.Prefix{n.PodCIDR}
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
