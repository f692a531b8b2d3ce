// Package network builds svclab labs out of Linux network namespaces.
//
// A lab (a topology.Lab) becomes one namespace per host, named
// svclab-<lab>.<host>, plus one edge router svclab-<lab>.router; each pod
// attached later gets its own namespace svclab-<lab>.<pod>. Nothing is ever
// created in the host's root namespace except the named namespaces
// themselves (the files under /run/netns): no link of a lab reaches the root
// namespace, so no lab traffic can leave the machine.
//
// The work is split in two:
//
//   - Planning is pure. PlanLab and PlanPod turn a topology into a Plan: the
//     derived facts (gateways, interface names, VTEP addresses and MACs) and
//     an ordered list of Steps. Every Step renders the shell command that
//     would do the same thing (Plan.Script), which is how the plan is tested
//     and how a reader can follow what a lab is made of.
//   - Execution applies the steps with netlink, each in its own namespace
//     (a netlink handle opened inside that namespace, or Do for sysctls),
//     and iptables-restore through `ip netns exec`.
//
// The underlay is the same for every lab: the router has one bridge (lan0,
// lan1, ...) per distinct node/client subnet with a gateway address on it,
// and every host has an eth0 veth whose peer is a port of that bridge.
// Pod attachment and overlay are two independent parts:
//
//	cni             attachment                          overlay
//	flannel-vxlan   bridge (cni0, veth<8 hex>)           flannel (flannel.1, VNI 1, port 8472)
//	calico-proxyarp calico (cali<11 hex>, proxy ARP)     calico (vxlan.calico, VNI 4096, port 4789)
//	canal           calico (cali<11 hex>, proxy ARP)     flannel (flannel.1, VNI 1, port 8472)
//
// An ipv6 or dual lab (topology.Spec.IPFamily) builds the same in each
// of its families: the router's bridges and the hosts' eth0s get their
// IPv6 addresses too (nodad, as a container runtime adds them), IPv6
// forwarding is on in the router and the nodes, and no eth0 takes router
// advertisements; cni0 also holds the first address of the node's /64;
// Calico's pods route via the link-local address of the node's cali* end
// (fe80::ecee:eeff:feee:eeee) with proxy_ndp on it; and each family has
// its VXLAN device: flannel-v6.1 (VNI 1, port 8472) and vxlan-v6.calico
// (VNI 4096, port 4789), programmed as their IPv4 twins. Every IPv6
// sysctl is set inside a lab namespace only, and the router has no route
// out in either family.
//
// Attaching a pod makes its address known at once, as the real plugins
// do, so that a pod on a deleted pod's address is reachable the moment it
// is attached: with the bridge attachment the pod announces its address
// with a gratuitous ARP (AnnounceAddr; cni0 has a fixed MAC), with Calico's
// the node gets a permanent neighbour entry for it (PinPodNeigh). An IPv6
// pod address skips DAD (accept_dad=0, as the bridge plugin with hairpin
// mode and Calico's plugin set it), and a bridge pod waits for cni0's own
// DAD (WaitDAD), so that the pod can use its gateway at once.
//
// Build is all-or-nothing; Destroy needs no state (it finds a lab by its
// namespaces) and is idempotent. Every namespace is tagged with an alias on
// its lo interface ("svclab lab=<lab> role=<role> ..."). The dot after the
// lab's name, which no lab name holds, keeps every lab's names apart (see
// NamespaceSeparator): lab "a" never lists, builds over or deletes a
// namespace of lab "a-b".
package network
