package kube

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/svclab/svclab/scenarios/kit"
)

// ClusterFamilies are the IP families of the cluster cs reaches, the
// primary one first, found as Kubernetes' own e2e framework finds them:
// the primary family is that of the kubernetes Service's cluster IP in
// the default namespace (test/e2e/e2e.go getDefaultClusterIPFamily), and
// a second family is there when every node has an InternalIP of it
// (test/e2e/network/dual_stack.go, "should have ipv4 and ipv6 internal
// node ip") — the kubernetes Service itself is single-stack on a
// dual-stack cluster, so its cluster IPs alone do not say.
func ClusterFamilies(ctx context.Context, cs kubernetes.Interface) ([]corev1.IPFamily, error) {
	svc, err := cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the cluster's IP family: the kubernetes Service's cluster IP: %w", err)
	}
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 {
		ips = []string{svc.Spec.ClusterIP}
	}
	var addrs []netip.Addr
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("the cluster's IP family: the kubernetes Service's cluster IP %q: %w", s, err)
		}
		addrs = append(addrs, a)
	}
	families := kit.Families(addrs...)
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("the cluster's IP families: the nodes' InternalIPs: %w", err)
	}
	for _, f := range everyNodesFamilies(nodes.Items) {
		if !contains(families, f) {
			families = append(families, f)
		}
	}
	return families, nil
}

// everyNodesFamilies are the IP families every one of nodes has an
// InternalIP of (none when there is no node), IPv4 first.
func everyNodesFamilies(nodes []corev1.Node) []corev1.IPFamily {
	if len(nodes) == 0 {
		return nil
	}
	var out []corev1.IPFamily
	for _, f := range []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol} {
		every := true
		for _, n := range nodes {
			if _, ok := kit.FirstOfFamily(internalIPs(n), f); !ok {
				every = false
				break
			}
		}
		if every {
			out = append(out, f)
		}
	}
	return out
}

// internalIPs are a node's InternalIP addresses, in its status's order.
func internalIPs(n corev1.Node) []string {
	var out []string
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			out = append(out, a.Address)
		}
	}
	return out
}

func contains(families []corev1.IPFamily, f corev1.IPFamily) bool {
	for _, g := range families {
		if g == f {
			return true
		}
	}
	return false
}

// Families are the cluster's IP families (ClusterFamilies).
func (t *Target) Families(ctx context.Context) ([]corev1.IPFamily, error) {
	return ClusterFamilies(ctx, t.clientset)
}
