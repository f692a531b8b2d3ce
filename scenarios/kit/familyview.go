package kit

import (
	"context"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// InFamily is ws as the specs of one IP family see it: a Service's
// spec.clusterIP is its cluster IP of family (spec.clusterIPs), a pod's
// status.podIP its address of family (status.podIPs), a node's IP and
// PodCIDR its InternalIP and pod range of family — so a spec written
// against clusterIP, podIP and the node's IP runs unchanged in either
// family. An object with none of family keeps what it has (the spec's
// own checks then say what is missing). "" is ws itself: a single-stack
// IPv4 run sees the objects as they are.
func InFamily(ws Workspace, family corev1.IPFamily) Workspace {
	if family == "" {
		return ws
	}
	return familyView{Workspace: ws, family: family}
}

// familyView is InFamily's workspace.
type familyView struct {
	Workspace
	family corev1.IPFamily
}

func (v familyView) Service(ctx context.Context, name string) (*corev1.Service, error) {
	svc, err := v.Workspace.Service(ctx, name)
	if err != nil || svc == nil {
		return svc, err
	}
	return ServiceInFamily(svc, v.family), nil
}

func (v familyView) Pods(ctx context.Context, app string) ([]corev1.Pod, error) {
	pods, err := v.Workspace.Pods(ctx, app)
	for i := range pods {
		pods[i] = PodInFamily(pods[i], v.family)
	}
	return pods, err
}

func (v familyView) Nodes(ctx context.Context) ([]Node, error) {
	nodes, err := v.Workspace.Nodes(ctx)
	for i := range nodes {
		nodes[i] = nodes[i].InFamily(v.family)
	}
	return nodes, err
}

// ServiceInFamily is a copy of svc whose spec.clusterIP is its cluster IP
// of family (svc itself when it has none of family).
func ServiceInFamily(svc *corev1.Service, family corev1.IPFamily) *corev1.Service {
	ip, ok := FirstOfFamily(svc.Spec.ClusterIPs, family)
	if !ok {
		return svc
	}
	out := svc.DeepCopy()
	out.Spec.ClusterIP = ip.String()
	return out
}

// PodInFamily is pod with status.podIP its address of family (pod as it
// is when it has none of family).
func PodInFamily(pod corev1.Pod, family corev1.IPFamily) corev1.Pod {
	var ips []string
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if ip, ok := FirstOfFamily(ips, family); ok {
		pod = *pod.DeepCopy()
		pod.Status.PodIP = ip.String()
	}
	return pod
}

// InFamily is n with IP and PodCIDR of family (its IPs and PodCIDRs);
// each stays as it is when n has none of family.
func (n Node) InFamily(family corev1.IPFamily) Node {
	for _, ip := range n.IPs {
		if FamilyOf(ip) == familyOrIPv4(family) {
			n.IP = ip
			break
		}
	}
	for _, p := range n.PodCIDRs {
		if FamilyOf(p.Addr()) == familyOrIPv4(family) {
			n.PodCIDR = p
			break
		}
	}
	return n
}

// Families are the IP families of addrs, each once, in order.
func Families(addrs ...netip.Addr) []corev1.IPFamily {
	var out []corev1.IPFamily
	for _, a := range addrs {
		if f := FamilyOf(a); a.IsValid() && !containsFamily(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func containsFamily(families []corev1.IPFamily, f corev1.IPFamily) bool {
	for _, g := range families {
		if g == f {
			return true
		}
	}
	return false
}
