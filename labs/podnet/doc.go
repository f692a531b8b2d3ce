// Package podnet holds the facts both lab backends' pod networks share, so
// that a netns lab and a kind cluster running svclab's CNIs build the same
// network: the VXLAN devices (IPv4 and IPv6), VNIs and ports of flannel
// and Calico, the MTUs,
// Calico's veth names, host MAC and IPv6 gateway, the masquerade rules flanneld and Felix
// install, and address ranges (pod CIDRs, load balancer pools).
//
// It is pure: no kernel, no files. labs/netns/network plans from it and
// labs/kind/cni programs kind nodes from it; neither imports the other.
package podnet
