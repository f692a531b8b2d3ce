package network

import (
	"fmt"
	"net/netip"

	"github.com/svclab/svclab/labs/netns/topology"
)

// attachment is how pods are plugged into a node (the CNI plugin's job).
type attachment interface {
	// node fills the attachment's facts into h.Node (bridge, gateways).
	node(h *Host)
	// nodeSteps prepare a node for pods.
	nodeSteps(h *Host) []Step
	// podSteps attach one pod; pp has its names and addresses filled in
	// (podPrefix and hostVeth say which).
	podSteps(h *Host, pp *PodPlan) []Step
	// podPrefix is the address a pod's eth0 gets (of either family).
	podPrefix(h *Host, ip netip.Addr) netip.Prefix
	// hostVeth names the node-side end of a pod's veth.
	hostVeth(kubeNamespace, pod string) string
	// reserved says whether ip may not be given to a pod on h (besides the
	// network and broadcast addresses).
	reserved(h *Host, ip netip.Addr) bool
}

// overlay is how nodes reach each other's pods.
type overlay interface {
	// vtep describes a node's VXLAN endpoint of podCIDR's family; local
	// is the node's underlay address of that family.
	vtep(node string, podCIDR netip.Prefix, local netip.Addr) VTEP
	// nodeSteps set up self's VTEP, its routes to every peer's pods, and
	// the overlay's iptables rules.
	nodeSteps(lab *topology.Lab, self *Host, peers []*Host) []Step
}

// parts maps a CNI flavour onto its attachment and overlay.
func parts(cni topology.CNI) (attachment, overlay, error) {
	switch cni {
	case topology.CNIFlannelVXLAN:
		return bridgeAttachment{}, flannelOverlay{}, nil
	case topology.CNICalicoProxyARP:
		return calicoAttachment{}, calicoOverlay{}, nil
	case topology.CNICanal:
		return calicoAttachment{}, flannelOverlay{}, nil
	}
	return nil, nil, fmt.Errorf("unknown CNI %q", cni)
}
