package network

import (
	"net/netip"
)

// bridgeAttachment is flannel's CNI (the bridge plugin with host-local
// IPAM): every pod's veth is a port of the node's cni0 bridge, and cni0
// holds the pods' gateway, the first address of the node's podCIDR.
type bridgeAttachment struct{}

// PodBridge is the node's pod bridge with the bridge attachment.
const PodBridge = "cni0"

func (bridgeAttachment) node(h *Host) {
	h.Node.Bridge = PodBridge
	h.Node.PodGateway = nthAddr(h.Node.PodCIDR, 1)
}

// nodeSteps:
//
//	ip -n <node> link add cni0 address <mac> mtu 1450 type bridge
//	ip -n <node> addr add 10.244.1.1/24 dev cni0
//	ip -n <node> link set dev cni0 up
//	ip netns exec <node> sysctl -qw net.bridge.bridge-nf-call-iptables=1
func (bridgeAttachment) nodeSteps(h *Host) []Step {
	n := h.Node
	return []Step{
		AddBridge{NS: h.Namespace, Name: n.Bridge, MTU: n.PodMTU, MAC: podBridgeMAC(h.Name)},
		AddAddr{NS: h.Namespace, Link: n.Bridge, Addr: netip.PrefixFrom(n.PodGateway, n.PodCIDR.Bits())},
		LinkUp{NS: h.Namespace, Link: n.Bridge},
		EnableBridgeNF{NS: h.Namespace},
	}
}

func (bridgeAttachment) podPrefix(h *Host, ip netip.Addr) netip.Prefix {
	return netip.PrefixFrom(ip, h.Node.PodCIDR.Bits())
}

func (bridgeAttachment) hostVeth(kubeNamespace, pod string) string {
	return BridgeVethName(kubeNamespace, pod)
}

func (bridgeAttachment) reserved(h *Host, ip netip.Addr) bool { return ip == h.Node.PodGateway }

// podSteps:
//
//	ip -n <pod> link add eth0 mtu 1450 type veth peer name veth1a2b3c4d mtu 1450 netns <node>
//	ip -n <node> link set dev veth1a2b3c4d master cni0
//	bridge -n <node> link set dev veth1a2b3c4d hairpin on
//	ip -n <node> link set dev veth1a2b3c4d up
//	ip -n <pod> addr add 10.244.1.2/24 dev eth0
//	ip -n <pod> link set dev eth0 up
//	ip -n <pod> route add default via 10.244.1.1 dev eth0
//	ip netns exec <pod> arping -q -c 1 -U -I eth0 10.244.1.2
//
// The last step announces the address, as the bridge plugin does: a pod
// that reuses a deleted pod's address (a Deployment scaled down and up
// again) is reachable at once, not after the node's neighbour entry with
// the old MAC expires.
func (bridgeAttachment) podSteps(h *Host, pp *PodPlan) []Step {
	node, pod := h.Namespace, pp.Namespace
	return []Step{
		AddVeth{NS: pod, Name: "eth0", MTU: pp.MTU, PeerNS: node, PeerName: pp.HostVeth},
		SetMaster{NS: node, Link: pp.HostVeth, Master: h.Node.Bridge},
		SetHairpin{NS: node, Link: pp.HostVeth},
		LinkUp{NS: node, Link: pp.HostVeth},
		AddAddr{NS: pod, Link: "eth0", Addr: pp.IP},
		LinkUp{NS: pod, Link: "eth0"},
		AddRoute{NS: pod, Gw: pp.Gateway, Dev: "eth0"},
		AnnounceAddr{NS: pod, Link: "eth0", IP: pp.IP.Addr(), NodeNS: node, NodeVeth: pp.HostVeth, Bridge: h.Node.Bridge},
	}
}

var _ attachment = bridgeAttachment{}
