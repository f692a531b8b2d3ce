package workload

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// assignClusterIPs gives a Service one cluster IP per family of its
// ipFamilies, in that order, as the API server's per-family allocators
// do: the one the manifest (or the stored Service) names, which must be in
// the lab's Service range of that family and free, else the lowest free
// one of that range. spec.clusterIP is clusterIPs[0]. A headless Service
// gets none.
func (c Cluster) assignClusterIPs(svc *corev1.Service, others []*corev1.Service, source, where string) error {
	s := &svc.Spec
	if len(s.ClusterIPs) > 0 && s.ClusterIPs[0] == corev1.ClusterIPNone {
		s.ClusterIP, s.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
		return nil
	}
	for i, family := range s.IPFamilies {
		if i >= len(s.ClusterIPs) {
			s.ClusterIPs = append(s.ClusterIPs, "")
		}
		ip, err := c.clusterIPOfFamily(family, s.ClusterIPs[i], clusterIPField(i), others)
		if err != nil {
			return errorf(source, "%s: %v", where, err)
		}
		s.ClusterIPs[i] = ip.String()
	}
	if len(s.ClusterIPs) > 0 {
		s.ClusterIP = s.ClusterIPs[0]
	}
	return nil
}

// clusterIPField names cluster IP i in errors: spec.clusterIP for the
// primary one (the field a manifest usually sets), spec.clusterIPs[i] else.
func clusterIPField(i int) string {
	if i == 0 {
		return "spec.clusterIP"
	}
	return fmt.Sprintf("spec.clusterIPs[%d]", i)
}

// clusterIPOfFamily checks a requested cluster IP of family (in the lab's
// range of it, not another Service's) or, when want is empty, allocates
// the lowest free one from the range's eleventh address up (.1 is the
// kubernetes Service, .10 the cluster DNS by convention), so labs are
// repeatable.
func (c Cluster) clusterIPOfFamily(family corev1.IPFamily, want, fieldName string, others []*corev1.Service) (netip.Addr, error) {
	subnet, ok := c.serviceSubnetOf(family)
	if !ok {
		return netip.Addr{}, fmt.Errorf("%s: the lab has no %s Service range", fieldName, family)
	}
	subnet = subnet.Masked()
	if want != "" {
		ip, err := netip.ParseAddr(want)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("%s %q: not an IP address", fieldName, want)
		}
		if !subnet.Contains(ip) {
			return netip.Addr{}, fmt.Errorf("%s %s: outside the lab's serviceSubnet %s", fieldName, ip, subnet)
		}
		// A scan, not a set of every allocated IP: thousands of Services
		// with their IPs given (svclab bench dataplane) would build that
		// set once per Service. Stored cluster IPs are canonical.
		for _, s := range others {
			for _, other := range s.Spec.ClusterIPs {
				if other == ip.String() {
					return netip.Addr{}, fmt.Errorf("%s %s: already allocated to another Service", fieldName, ip)
				}
			}
		}
		return ip, nil
	}
	used := map[netip.Addr]bool{}
	for _, s := range others {
		for _, other := range s.Spec.ClusterIPs {
			if a, err := netip.ParseAddr(other); err == nil {
				used[a] = true
			}
		}
	}
	ip := subnet.Addr()
	for i := 0; i < 11; i++ {
		ip = ip.Next()
	}
	for ; subnet.Contains(ip) && subnet.Contains(ip.Next()); ip = ip.Next() {
		if !used[ip] {
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%s: the serviceSubnet %s is full", fieldName, subnet)
}
