// Package cni is svclab's pod network for kind clusters, offline (the
// flannel and Calico images and Go modules are out of reach): a per-node
// agent, run by the svclab-cni DaemonSet from the svclab/svclab:dev image,
// and, for the Calico variant, a CNI plugin that is svclab itself.
//
//	variant          pod attachment                                   overlay
//	flannel-vxlan    Debian's bridge + host-local plugins: cni0,       flannel.1, VNI 1, UDP 8472
//	                 veth per pod, gateway .1 of the node's podCIDR
//	calico-proxyarp  svclab's plugin (svclab cni plugin): cali<11 hex>  vxlan.calico, VNI 4096, UDP 4789
//	                 veths, pod /32 with default via 169.254.1.1,
//	                 answered by proxy ARP on the host side
//
// The agent reads its Node (NODE_NAME) and every other Node from the API
// server: its podCIDR goes into /etc/cni/net.d/10-svclab.conflist, and for
// every other node it programs what flanneld or Felix would: an onlink
// route to the node's podCIDR via its VTEP address over the VXLAN device,
// a permanent neighbour entry for that address with the VTEP MAC, and an
// FDB entry sending that MAC to the node's InternalIP. VTEP MACs are
// derived from the node name as in labs/netns/network, so nothing has to be
// published on the Node objects. Device names, VNIs and ports are
// labs/netns/network's (the same as the netns labs), so the scenarios read the
// same.
//
// On a dual-stack or IPv6 cluster (--cluster-cidr with an IPv6 CIDR,
// flannel-vxlan only) the agent does the same per family, as flanneld
// with EnableIPv6: flannel-v6.1 (flannel.1's VNI and port, MTU 1430) over
// the node's IPv6 InternalIP, its IPv6 podCIDR in the conflist's second
// host-local range (cni0 gets the gateway of each), and flanneld's IPv6
// masquerade rules through the node's ip6tables.
package cni
