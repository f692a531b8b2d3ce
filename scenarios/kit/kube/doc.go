// Package kube is the conformance scenarios' target on a Kubernetes
// cluster reached through a kubeconfig or the in-cluster config: kind
// clusters svclab creates, or any other. Objects go through
// e2e-framework's klient and client-go; what the nodes' kernels did is
// read by a node agent, a hostNetwork/hostPID DaemonSet of svclab's image
// with only the capabilities it needs (`svclab node …`: conntrack over
// netlink, the route source, /proxyMode, and the node's own iptables-save
// and nft through a chroot into its root filesystem), on the nodes a
// selector picks.
//
// Every request goes through one RBAC table (Permissions): `svclab
// conformance rbac` prints it, a request outside it is refused before it
// is sent, and a 403 names the rule that grants it. Every object of a
// run is labelled with the run; a run renews a heartbeat Lease, and the
// next run (or `svclab conformance cleanup`) sweeps what a killed one
// left, putting back the proxy ConfigMap a --disruptive run saved before
// changing it.
package kube
