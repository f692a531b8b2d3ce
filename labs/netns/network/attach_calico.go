package network

import (
	"net/netip"

	"github.com/svclab/svclab/labs/podnet"
)

// CalicoGateway is the pods' default gateway with the Calico attachment. No
// interface has this address: the node answers ARP for it on every cali*
// interface (proxy_arp=1), so a pod's every packet goes to the node, which
// routes it.
var CalicoGateway = netip.MustParseAddr("169.254.1.1")

// calicoAttachment is Calico's CNI plugin: a routed veth per pod, no
// bridge. The pod has a /32 and reaches everything through 169.254.1.1;
// the node has a /32 route to each pod through its cali* interface.
type calicoAttachment struct{}

func (calicoAttachment) node(h *Host) {
	for _, cidr := range h.Node.PodCIDRs {
		gw := CalicoGateway
		if cidr.Addr().Is6() {
			gw = podnet.CalicoGatewayIPv6
		}
		h.Node.PodGateways = append(h.Node.PodGateways, gw)
	}
	h.Node.PodGateway = h.Node.PodGateways[0]
}

// nodeSteps: none. The node's forwarding is part of the underlay and each
// cali* interface is set up with its pod.
func (calicoAttachment) nodeSteps(*Host) []Step { return nil }

func (calicoAttachment) podPrefix(_ *Host, ip netip.Addr) netip.Prefix { return hostPrefix(ip) }

func (calicoAttachment) hostVeth(kubeNamespace, pod string) string {
	return podnet.CalicoVethName(kubeNamespace, pod)
}

// reserved keeps the first address of the podCIDR free with Calico too, so
// that pod addresses do not depend on the CNI flavour.
func (calicoAttachment) reserved(h *Host, ip netip.Addr) bool {
	i, ok := h.Node.familyIndex(ip)
	return ok && ip == nthAddr(h.Node.PodCIDRs[i], 1)
}

// podSteps:
//
//	ip -n <pod> link add eth0 mtu 1450 type veth peer name cali0123456789a mtu 1450 address ee:ee:ee:ee:ee:ee netns <node>
//	ip netns exec <node> sysctl -qw net.ipv4.conf.cali0123456789a.proxy_arp=1
//	ip netns exec <node> sysctl -qw net.ipv4.neigh.cali0123456789a.proxy_delay=0
//	ip netns exec <node> sysctl -qw net.ipv4.conf.cali0123456789a.forwarding=1
//	ip -n <node> link set dev cali0123456789a up
//	ip -n <pod> addr add 10.100.40.2/32 dev eth0
//	ip -n <pod> link set dev eth0 up
//	ip -n <pod> route add 169.254.1.1/32 dev eth0 scope link
//	ip -n <pod> route add default via 169.254.1.1 dev eth0
//	ip -n <node> route add 10.100.40.2/32 dev cali0123456789a scope link
//	ip -n <node> neigh replace 10.100.40.2 lladdr $(ip netns exec <pod> cat /sys/class/net/eth0/address) dev cali0123456789a nud permanent
//
// The last step is Felix's static ARP entry for the workload. What a
// reused address could otherwise find stale: the node's neighbour entry
// and /32 route for it live on the old pod's cali* interface and go with
// it (DetachPod deletes the veth pair synchronously; a route still there
// would make the route step fail with "file exists", as Calico's plugin
// refuses a route that exists for another interface); the pod's entry for
// 169.254.1.1 lives in its own new namespace; the router and the clients
// have no route to pod addresses (they reach pods through node addresses
// and Service IPs), so they hold no entry for one.
//
// With IPv6, as Calico's plugin (dataplane_linux.go): on the node's end
// accept_dad=0, proxy_ndp=1, forwarding=1 and accept_ra=0 before it comes
// up, so that the link-local address the kernel derives from
// ee:ee:ee:ee:ee:ee (fe80::ecee:eeff:feee:eeee) is usable at once; DAD off
// on the pod's eth0; the pod's address as a /128 and its default route
// via that link-local address; the node's /128 route to the pod. The
// node pins no IPv6 neighbour for the pod: Felix's static entries are ARP
// only (routetable's addStaticARPEntry is AF_INET).
func (calicoAttachment) podSteps(h *Host, pp *PodPlan) []Step {
	node, pod, veth := h.Namespace, pp.Namespace, pp.HostVeth
	steps := []Step{AddVeth{NS: pod, Name: "eth0", MTU: pp.MTU, PeerNS: node, PeerName: veth, PeerMAC: podnet.CalicoHostMAC}}
	for _, ip := range pp.IPs {
		if ip.Addr().Is4() {
			steps = append(steps,
				SetSysctl{NS: node, Key: "net/ipv4/conf/" + veth + "/proxy_arp", Value: "1"},
				SetSysctl{NS: node, Key: "net/ipv4/neigh/" + veth + "/proxy_delay", Value: "0"},
				SetSysctl{NS: node, Key: "net/ipv4/conf/" + veth + "/forwarding", Value: "1"})
		} else {
			steps = append(steps,
				SetSysctl{NS: node, Key: "net/ipv6/conf/" + veth + "/accept_dad", Value: "0"},
				SetSysctl{NS: node, Key: "net/ipv6/conf/" + veth + "/proxy_ndp", Value: "1"},
				SetSysctl{NS: node, Key: "net/ipv6/conf/" + veth + "/forwarding", Value: "1"},
				SetSysctl{NS: node, Key: "net/ipv6/conf/" + veth + "/accept_ra", Value: "0"},
				SetSysctl{NS: pod, Key: "net/ipv6/conf/eth0/accept_dad", Value: "0"})
		}
	}
	steps = append(steps, LinkUp{NS: node, Link: veth})
	for _, ip := range pp.IPs {
		steps = append(steps, AddAddr{NS: pod, Link: "eth0", Addr: ip})
	}
	steps = append(steps, LinkUp{NS: pod, Link: "eth0"})
	for i, gw := range pp.Gateways {
		if pp.IPs[i].Addr().Is4() {
			steps = append(steps, AddRoute{NS: pod, Dst: host32(gw), Dev: "eth0", ScopeLink: true})
		}
		steps = append(steps, AddRoute{NS: pod, Gw: gw, Dev: "eth0"})
	}
	for _, ip := range pp.IPs {
		steps = append(steps, AddRoute{NS: node, Dst: hostPrefix(ip.Addr()), Dev: veth, ScopeLink: true})
	}
	for _, ip := range pp.IPs {
		if ip.Addr().Is4() {
			steps = append(steps, PinPodNeigh{NS: node, Dev: veth, IP: ip.Addr(), PodNS: pod, PodLink: "eth0"})
		}
	}
	return steps
}

var _ attachment = calicoAttachment{}
