package workload

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AnnotationLoadBalancerIPs is MetalLB's annotation asking for addresses
// of the pool (comma-separated; the lab's pool is IPv4, so one IPv4 address, on a
// dual-stack lab too).
// spec.loadBalancerIP, deprecated upstream, is honoured too, and first.
const AnnotationLoadBalancerIPs = "metallb.io/loadBalancerIPs"

// assignLoadBalancer is the lab's load balancer controller, in the manner of
// MetalLB: a LoadBalancer Service gets an address of the lab's pool in
// status.loadBalancer.ingress (with ipMode VIP, so the proxies take it),
// the requested one if it asks (and it is in the pool and free), the one
// it had, or the lowest free one. A lab without a pool leaves the Service
// pending, as a cluster without a load balancer does, and so does a
// Service whose loadBalancerClass names another load balancer. Any status
// the manifest carries is dropped first: the API server ignores status on
// create, and the controller writes it.
func (c Cluster) assignLoadBalancer(svc, old *corev1.Service, others []*corev1.Service) *field.Error {
	svc.Status = corev1.ServiceStatus{}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.LoadBalancerClass != nil {
		return nil
	}
	want, path, err := requestedLoadBalancerIP(svc)
	if err != nil {
		return err
	}
	pool := c.LoadBalancerPool
	if !pool.IsValid() {
		if want.IsValid() {
			return field.Invalid(path, want.String(), "the lab has no load balancer pool (spec.loadBalancer.pool in the lab file)")
		}
		return nil
	}
	if !hasFamily(svc, corev1.IPv4Protocol) {
		// The pool is IPv4: a Service of IPv6 only gets none and stays
		// pending, as MetalLB leaves it without a pool of its family (an
		// address of the other family is one no proxier of its family
		// would program).
		if want.IsValid() {
			return field.Invalid(path, want.String(), fmt.Sprintf("the lab's load balancer pool %s is IPv4 and spec.ipFamilies is %v", pool, svc.Spec.IPFamilies))
		}
		return nil
	}
	used := map[netip.Addr]string{}
	for _, s := range others {
		for _, ing := range s.Status.LoadBalancer.Ingress {
			if a, ok := parseIP(ing.IP); ok {
				used[a] = s.Namespace + "/" + s.Name
			}
		}
	}
	if want.IsValid() {
		if !pool.Contains(want) {
			return field.Invalid(path, want.String(), fmt.Sprintf("not in the lab's load balancer pool %s", pool))
		}
		if owner, taken := used[want]; taken {
			return field.Invalid(path, want.String(), "already allocated to Service "+owner)
		}
		setIngress(svc, want)
		return nil
	}
	if old != nil && old.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, ing := range old.Status.LoadBalancer.Ingress {
			if a, ok := parseIP(ing.IP); ok && pool.Contains(a) && used[a] == "" {
				setIngress(svc, a)
				return nil
			}
		}
	}
	for a := pool.First; pool.Contains(a); a = a.Next() {
		if used[a] == "" {
			setIngress(svc, a)
			return nil
		}
	}
	return field.Invalid(field.NewPath("status", "loadBalancer", "ingress"), "",
		fmt.Sprintf("the lab's load balancer pool %s is exhausted: all %d addresses are allocated", pool, pool.Size()))
}

// requestedLoadBalancerIP is the address a Service asks for, and the
// field that asks, if any.
func requestedLoadBalancerIP(svc *corev1.Service) (netip.Addr, *field.Path, *field.Error) {
	if ip := svc.Spec.LoadBalancerIP; ip != "" {
		path := field.NewPath("spec", "loadBalancerIP")
		a, ok := parseIP(ip)
		if !ok || !a.Is4() {
			return netip.Addr{}, path, field.Invalid(path, ip, "must be an IPv4 address (the lab's load balancer pool is IPv4)")
		}
		return a, path, nil
	}
	val, set := svc.Annotations[AnnotationLoadBalancerIPs]
	if !set {
		return netip.Addr{}, nil, nil
	}
	path := field.NewPath("metadata", "annotations").Key(AnnotationLoadBalancerIPs)
	ips := strings.Split(val, ",")
	if len(ips) != 1 {
		return netip.Addr{}, path, field.Invalid(path, val, "one IPv4 address (the lab's load balancer pool is IPv4)")
	}
	a, ok := parseIP(strings.TrimSpace(ips[0]))
	if !ok || !a.Is4() {
		return netip.Addr{}, path, field.Invalid(path, val, "must be an IPv4 address (the lab's load balancer pool is IPv4)")
	}
	return a, path, nil
}

func setIngress(svc *corev1.Service, a netip.Addr) {
	vip := corev1.LoadBalancerIPModeVIP
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: a.String(), IPMode: &vip}}
}

// parseIP parses an address in canonical form.
func parseIP(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a, true
}

// LoadBalancerIngress is the address the lab's load balancer gave svc, or
// the zero Addr while it is pending.
func LoadBalancerIngress(svc *corev1.Service) netip.Addr {
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if a, ok := parseIP(ing.IP); ok {
			return a
		}
	}
	return netip.Addr{}
}

// assignHealthCheckNodePort gives a LoadBalancer Service with
// externalTrafficPolicy Local its healthCheckNodePort, from the node port
// range and the same allocator as node ports, as the API server does: the
// one the manifest names, the one it had, or the lowest free one.
func (c Cluster) assignHealthCheckNodePort(svc, old *corev1.Service, others []*corev1.Service, source, where string) error {
	if !needsHealthCheck(svc) {
		return nil
	}
	const path = "spec.healthCheckNodePort"
	taken := map[int32]string{}
	for _, s := range others {
		for _, p := range append(s.Spec.Ports, corev1.ServicePort{NodePort: s.Spec.HealthCheckNodePort}) {
			if p.NodePort != 0 {
				taken[p.NodePort] = "Service " + s.Namespace + "/" + s.Name
			}
		}
	}
	for i, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			taken[p.NodePort] = fmt.Sprintf("spec.ports[%d].nodePort", i)
		}
	}
	hc := svc.Spec.HealthCheckNodePort
	if hc == 0 && old != nil && needsHealthCheck(old) {
		hc = old.Spec.HealthCheckNodePort
	}
	if hc != 0 {
		if hc < NodePortMin || hc > NodePortMax {
			return errorf(source, "%s: %s %d: outside the node port range %d-%d", where, path, hc, NodePortMin, NodePortMax)
		}
		if owner, clash := taken[hc]; clash {
			return errorf(source, "%s: %s %d: port clash: already allocated to %s", where, path, hc, owner)
		}
		svc.Spec.HealthCheckNodePort = hc
		return nil
	}
	for port := int32(NodePortMin); port <= NodePortMax; port++ {
		if _, clash := taken[port]; !clash {
			svc.Spec.HealthCheckNodePort = port
			return nil
		}
	}
	return errorf(source, "%s: %s: no free node port left", where, path)
}

// hasFamily says whether the Service's spec.ipFamilies (defaulted by
// then; empty counts as IPv4, an older stored object) hold family.
func hasFamily(svc *corev1.Service, family corev1.IPFamily) bool {
	if len(svc.Spec.IPFamilies) == 0 {
		return family == corev1.IPv4Protocol
	}
	return slices.Contains(svc.Spec.IPFamilies, family)
}
