package loadbalancer

import (
	"net/netip"
	"slices"
	"sort"

	"github.com/svclab/svclab/labs/podnet"
	corev1 "k8s.io/api/core/v1"
)

// Class is the spec.loadBalancerClass this load balancer answers to,
// besides Services that name no class.
const Class = "svclab.dev/kind-loadbalancer"

// Change is one Service's new status.loadBalancer.ingress: an address of
// the pool, or none (Ingress nil) when the Service gives its address back.
type Change struct {
	Namespace, Name string
	Ingress         []corev1.LoadBalancerIngress
}

// Plan says which Services' status must change so that every Service this
// load balancer serves holds one address of pool, and no other Service
// holds one: a Service keeps the address it has; a new one gets the
// address spec.loadBalancerIP asks for when it is in the pool and free,
// else the lowest free one (none while the pool is exhausted: it stays
// pending); a Service that stopped being a LoadBalancer gives its address
// back. Services are taken oldest first, so an address two Services claim
// stays with the older one.
func Plan(pool podnet.AddrRange, services []corev1.Service) []Change {
	svcs := append([]corev1.Service(nil), services...)
	sort.SliceStable(svcs, func(i, j int) bool {
		a, b := svcs[i].CreationTimestamp, svcs[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return svcs[i].Namespace+"/"+svcs[i].Name < svcs[j].Namespace+"/"+svcs[j].Name
	})
	used := map[netip.Addr]bool{}
	var changes, pending []Change
	var waiting []*corev1.Service
	for i := range svcs {
		s := &svcs[i]
		have := ingressAddrs(s, pool)
		switch {
		case !Serves(s) || !ofPoolFamily(pool, s):
			if len(have) > 0 && !otherClass(s) {
				changes = append(changes, Change{Namespace: s.Namespace, Name: s.Name})
			}
		case len(have) == 1 && len(s.Status.LoadBalancer.Ingress) == 1 && !used[have[0]] && isVIP(s.Status.LoadBalancer.Ingress[0]):
			used[have[0]] = true
		default:
			waiting = append(waiting, s)
		}
	}
	for _, s := range waiting {
		a, ok := pick(pool, used, s)
		if !ok {
			if len(s.Status.LoadBalancer.Ingress) > 0 {
				pending = append(pending, Change{Namespace: s.Namespace, Name: s.Name})
			}
			continue
		}
		used[a] = true
		changes = append(changes, Change{Namespace: s.Namespace, Name: s.Name, Ingress: Ingress(a)})
	}
	return append(changes, pending...)
}

// Serves says whether this load balancer gives s an address.
func Serves(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && (s.Spec.LoadBalancerClass == nil || *s.Spec.LoadBalancerClass == Class)
}

// ofPoolFamily says whether s has the pool's IP family among its
// spec.ipFamilies (none set: an IPv4 Service, as stored before families):
// an IPv6-only Service on a dual-stack cluster gets no address of the IPv4
// pool, which no proxier of its family would program, and stays pending,
// as MetalLB leaves it without a pool of its family.
func ofPoolFamily(pool podnet.AddrRange, s *corev1.Service) bool {
	want := corev1.IPv4Protocol
	if pool.First.Is6() {
		want = corev1.IPv6Protocol
	}
	if len(s.Spec.IPFamilies) == 0 {
		return want == corev1.IPv4Protocol
	}
	return slices.Contains(s.Spec.IPFamilies, want)
}

// otherClass: a LoadBalancer another load balancer serves; its status is
// that one's.
func otherClass(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && !Serves(s)
}

// Ingress is the status a Service holding a gets.
func Ingress(a netip.Addr) []corev1.LoadBalancerIngress {
	vip := corev1.LoadBalancerIPModeVIP
	return []corev1.LoadBalancerIngress{{IP: a.String(), IPMode: &vip}}
}

func isVIP(ing corev1.LoadBalancerIngress) bool {
	return ing.IPMode != nil && *ing.IPMode == corev1.LoadBalancerIPModeVIP && ing.Hostname == "" && len(ing.Ports) == 0
}

// pick is the address s gets: the one spec.loadBalancerIP asks for when it
// is in the pool and free, else the lowest free one.
func pick(pool podnet.AddrRange, used map[netip.Addr]bool, s *corev1.Service) (netip.Addr, bool) {
	if want, err := netip.ParseAddr(s.Spec.LoadBalancerIP); err == nil && pool.Contains(want) && !used[want] {
		return want, true
	}
	for _, a := range ingressAddrs(s, pool) {
		if !used[a] {
			return a, true
		}
	}
	for a := pool.First; pool.Contains(a); a = a.Next() {
		if !used[a] {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// ingressAddrs are the addresses of the pool in s's status.
func ingressAddrs(s *corev1.Service, pool podnet.AddrRange) []netip.Addr {
	var out []netip.Addr
	for _, ing := range s.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(ing.IP); err == nil && pool.Contains(a) {
			out = append(out, a)
		}
	}
	return out
}
