package kit

import (
	"context"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dualWorkspace is a Workspace of one dual-stack Service, pod and node,
// IPv4 primary, as a kind ipFamily: dual cluster has them.
type dualWorkspace struct{ Workspace }

func (dualWorkspace) Service(context.Context, string) (*corev1.Service, error) {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
		ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10", "fd00:10:96::a"}}}, nil
}

func (dualWorkspace) Pods(context.Context, string) ([]corev1.Pod, error) {
	return []corev1.Pod{{Status: corev1.PodStatus{PodIP: "10.244.1.5", PodIPs: []corev1.PodIP{{IP: "10.244.1.5"}, {IP: "fd00:10:244:1::5"}}}}}, nil
}

func (dualWorkspace) Nodes(context.Context) ([]Node, error) {
	return []Node{{Name: "a", IP: netip.MustParseAddr("172.18.0.2"), PodCIDR: netip.MustParsePrefix("10.244.1.0/24"),
		IPs:      []netip.Addr{netip.MustParseAddr("172.18.0.2"), netip.MustParseAddr("fc00:f853:ccd:e793::2")},
		PodCIDRs: []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24"), netip.MustParsePrefix("fd00:10:244:1::/64")}}}, nil
}

func TestInFamily(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		family                 corev1.IPFamily
		clusterIP, podIP, node string
		podCIDR                string
	}{
		{"", "10.96.0.10", "10.244.1.5", "172.18.0.2", "10.244.1.0/24"},
		{corev1.IPv4Protocol, "10.96.0.10", "10.244.1.5", "172.18.0.2", "10.244.1.0/24"},
		{corev1.IPv6Protocol, "fd00:10:96::a", "fd00:10:244:1::5", "fc00:f853:ccd:e793::2", "fd00:10:244:1::/64"},
	} {
		ws := InFamily(dualWorkspace{}, c.family)
		svc, _ := ws.Service(ctx, "web")
		pods, _ := ws.Pods(ctx, "web")
		nodes, _ := ws.Nodes(ctx)
		if svc.Spec.ClusterIP != c.clusterIP || pods[0].Status.PodIP != c.podIP || nodes[0].IP.String() != c.node || nodes[0].PodCIDR.String() != c.podCIDR {
			t.Errorf("family %q: clusterIP %s, podIP %s, node %s %s; want %s %s %s %s", c.family,
				svc.Spec.ClusterIP, pods[0].Status.PodIP, nodes[0].IP, nodes[0].PodCIDR, c.clusterIP, c.podIP, c.node, c.podCIDR)
		}
		if len(svc.Spec.ClusterIPs) != 2 {
			t.Errorf("family %q: clusterIPs %v, want both kept", c.family, svc.Spec.ClusterIPs)
		}
	}
}

// TestInFamilyKeepsWhatHasNoneOfTheFamily: an IPv4-only object seen in
// IPv6 stays as it is (the spec's own checks say what is missing).
func TestInFamilyKeepsWhatHasNoneOfTheFamily(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"}}}
	if got := ServiceInFamily(svc, corev1.IPv6Protocol); got.Spec.ClusterIP != "10.96.0.10" {
		t.Errorf("clusterIP %s", got.Spec.ClusterIP)
	}
	n := Node{Name: "a", IP: netip.MustParseAddr("172.18.0.2")}
	if got := n.InFamily(corev1.IPv6Protocol); got.IP != n.IP {
		t.Errorf("node IP %s", got.IP)
	}
}

func TestFamilies(t *testing.T) {
	got := Families(netip.MustParseAddr("fd00::1"), netip.Addr{}, netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::2"))
	if len(got) != 2 || got[0] != corev1.IPv6Protocol || got[1] != corev1.IPv4Protocol {
		t.Errorf("Families: %v, want [IPv6 IPv4]", got)
	}
}
