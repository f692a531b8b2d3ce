package netns

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
)

// Every host of a lab resolves through the lab's cluster DNS. A pod gets
// what the kubelet writes for dnsPolicy ClusterFirst (the default):
//
//	search <namespace>.svc.cluster.local svc.cluster.local cluster.local
//	nameserver <kube-dns ClusterIP>
//	options ndots:5
//
// Nodes, clients and the router get the same with the namespace "default".
// (On a kubeadm node resolv.conf is the host's; a lab node's host is this
// machine, whose name servers a lab namespace cannot reach, so each lookup
// would wait for its timeout and a query could never leave the lab
// anyway.) A pod with dnsPolicy Default, as the coredns pod, gets its
// node's file. The files live at /etc/netns/svclab-<lab>.<host>/resolv.conf,
// which `ip netns exec` — and so `svclab exec` — bind-mounts over
// /etc/resolv.conf in the command's own mount namespace. The lab's
// long-running processes resolve no names and run without a mount
// namespace of their own (process.Start).

// clusterDomain is the lab's cluster domain (the kubelet's --cluster-domain).
const clusterDomain = "cluster.local"

// resolvConf is the resolv.conf body of a host in Kubernetes namespace ns.
func (l *Lab) resolvConf(ns string) []byte {
	return fmt.Appendf(nil, "search %s.svc.%s svc.%s %s\nnameserver %s\noptions ndots:5\n",
		ns, clusterDomain, clusterDomain, clusterDomain, ClusterDNSIP(l.Topology.Spec.ServiceSubnet))
}

// writeHostResolvConfs writes the files of the nodes, clients and the router.
func (l *Lab) writeHostResolvConfs() error {
	hosts := []string{topology.RouterName}
	for _, h := range l.Topology.Hosts() {
		hosts = append(hosts, h.Name)
	}
	for _, h := range hosts {
		if err := network.WriteResolvConf(l.Name(), h, l.resolvConf("default")); err != nil {
			return err
		}
	}
	return nil
}

// writePodResolvConf writes a pod's file as its dnsPolicy says.
func (l *Lab) writePodResolvConf(pod *corev1.Pod) error {
	ns := pod.Namespace
	if pod.Spec.DNSPolicy == corev1.DNSDefault || pod.Spec.DNSPolicy == corev1.DNSNone {
		ns = "default" // the node's file (dnsConfig is not supported)
	}
	return network.WriteResolvConf(l.Name(), pod.Name, l.resolvConf(ns))
}
