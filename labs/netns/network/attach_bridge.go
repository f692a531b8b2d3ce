package network

import (
	"net/netip"
	"slices"
)

// bridgeAttachment is flannel's CNI (the bridge plugin with host-local
// IPAM): every pod's veth is a port of the node's cni0 bridge, and cni0
// holds the pods' gateway, the first address of the node's podCIDR.
type bridgeAttachment struct{}

// PodBridge is the node's pod bridge with the bridge attachment.
const PodBridge = "cni0"

func (bridgeAttachment) node(h *Host) {
	h.Node.Bridge = PodBridge
	for _, cidr := range h.Node.PodCIDRs {
		h.Node.PodGateways = append(h.Node.PodGateways, nthAddr(cidr, 1))
	}
	h.Node.PodGateway = h.Node.PodGateways[0]
}

// nodeSteps:
//
//	ip -n <node> link add cni0 address <mac> mtu 1450 type bridge
//	ip -n <node> addr add 10.244.1.1/24 dev cni0
//	ip -n <node> link set dev cni0 up
//	ip netns exec <node> sysctl -qw net.bridge.bridge-nf-call-iptables=1
//
// With IPv6, cni0 also holds the first address of the node's /64, added
// as the bridge plugin adds it (ensureAddr: with DAD, which runs once the
// bridge has a port up; each pod's attachment waits for it).
func (bridgeAttachment) nodeSteps(h *Host) []Step {
	n := h.Node
	steps := []Step{AddBridge{NS: h.Namespace, Name: n.Bridge, MTU: n.PodMTU, MAC: podBridgeMAC(h.Name)}}
	for i, cidr := range n.PodCIDRs {
		steps = append(steps, AddAddr{NS: h.Namespace, Link: n.Bridge, Addr: netip.PrefixFrom(n.PodGateways[i], cidr.Bits())})
	}
	steps = append(steps, LinkUp{NS: h.Namespace, Link: n.Bridge})
	for _, cidr := range n.PodCIDRs {
		steps = append(steps, EnableBridgeNF{NS: h.Namespace, IPv6: cidr.Addr().Is6()})
	}
	return steps
}

func (bridgeAttachment) podPrefix(h *Host, ip netip.Addr) netip.Prefix {
	i, _ := h.Node.familyIndex(ip)
	return netip.PrefixFrom(ip, h.Node.PodCIDRs[i].Bits())
}

func (bridgeAttachment) hostVeth(kubeNamespace, pod string) string {
	return BridgeVethName(kubeNamespace, pod)
}

func (bridgeAttachment) reserved(h *Host, ip netip.Addr) bool {
	return slices.Contains(h.Node.PodGateways, ip)
}

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
//
// With IPv6, as the bridge plugin with hairpin mode: DAD off on the pod's
// eth0 (disableIPV6DAD: hairpin echoes its neighbour solicitations),
// the pod's /64 address, a default route via cni0's IPv6 address; then
// the attachment waits for cni0's own DAD, which starts when its first
// port comes up, so that the pod can reach its gateway at once.
func (bridgeAttachment) podSteps(h *Host, pp *PodPlan) []Step {
	node, pod := h.Namespace, pp.Namespace
	steps := []Step{
		AddVeth{NS: pod, Name: "eth0", MTU: pp.MTU, PeerNS: node, PeerName: pp.HostVeth},
		SetMaster{NS: node, Link: pp.HostVeth, Master: h.Node.Bridge},
		SetHairpin{NS: node, Link: pp.HostVeth},
		LinkUp{NS: node, Link: pp.HostVeth},
	}
	if pp.hasIPv6() {
		steps = append(steps, SetSysctl{NS: pod, Key: "net/ipv6/conf/eth0/accept_dad", Value: "0"})
	}
	for _, ip := range pp.IPs {
		steps = append(steps, AddAddr{NS: pod, Link: "eth0", Addr: ip})
	}
	steps = append(steps, LinkUp{NS: pod, Link: "eth0"})
	if pp.hasIPv6() {
		steps = append(steps, WaitDAD{NS: node, Link: h.Node.Bridge})
	}
	for _, gw := range pp.Gateways {
		steps = append(steps, AddRoute{NS: pod, Gw: gw, Dev: "eth0"})
	}
	for _, ip := range pp.IPs {
		if ip.Addr().Is4() {
			steps = append(steps, AnnounceAddr{NS: pod, Link: "eth0", IP: ip.Addr(), NodeNS: node, NodeVeth: pp.HostVeth, Bridge: h.Node.Bridge})
		}
	}
	return steps
}

var _ attachment = bridgeAttachment{}
