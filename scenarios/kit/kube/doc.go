// Package kube is the conformance scenarios' target on a Kubernetes
// cluster reached through a kubeconfig: kind clusters svclab creates, or
// any other. Objects go through e2e-framework's klient; what the nodes'
// kernels did is read by a node agent, a privileged hostNetwork/hostPID
// DaemonSet running svclab's image (`svclab node …`: conntrack over
// netlink, the route source, /proxyMode, and the node's own
// iptables-save and nft through a chroot into its root filesystem).
package kube
