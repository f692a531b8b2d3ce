package model

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// defaultStickyMaxAgeSeconds is the API default for
// sessionAffinityConfig.clientIP.timeoutSeconds (3 hours).
const defaultStickyMaxAgeSeconds = 10800

// Build converts Services and EndpointSlices into an IPv4 Snapshot for the
// node nodeName. It is BuildFamily with corev1.IPv4Protocol.
func Build(services []*corev1.Service, slices []*discoveryv1.EndpointSlice, nodeName string) *Snapshot {
	return BuildFamily(corev1.IPv4Protocol, services, slices, nodeName)
}

// BuildFamily converts Services and EndpointSlices into the Snapshot of one
// IP family for the node nodeName.
//
// As upstream, it skips headless services (clusterIP "" or "None"),
// ExternalName services, services without a cluster IP of the family, and
// EndpointSlices of another address type or without the
// kubernetes.io/service-name label. Service ports come out sorted by name;
// see ServicePort.Endpoints for how endpoints are resolved.
func BuildFamily(family corev1.IPFamily, services []*corev1.Service, slices []*discoveryv1.EndpointSlice, nodeName string) *Snapshot {
	slicesByService := groupEndpointSlices(family, slices)
	snap := &Snapshot{NodeName: nodeName, Family: family}
	for _, svc := range services {
		if svc == nil || shouldSkipService(svc) {
			continue
		}
		clusterIP, ok := clusterIPOfFamily(family, svc)
		if !ok {
			continue
		}
		key := serviceKey{svc.Namespace, svc.Name}
		for i := range svc.Spec.Ports {
			sp := newServicePort(family, svc, &svc.Spec.Ports[i], clusterIP)
			sp.Endpoints = endpointsForPort(family, sp.Name, slicesByService[key], nodeName)
			snap.ServicePorts = append(snap.ServicePorts, sp)
		}
	}
	snap.SortServicePorts()
	snap.ServicePorts = compactByName(snap.ServicePorts)
	return snap
}

// compactByName drops service ports whose name repeats the previous
// one (two Service objects with the same namespace/name in the input); the
// first wins.
func compactByName(sps []*ServicePort) []*ServicePort {
	return slices.CompactFunc(sps, func(a, b *ServicePort) bool { return a.Name == b.Name })
}

// shouldSkipService mirrors upstream proxyutil.ShouldSkipService: headless
// and ExternalName services are not proxied.
func shouldSkipService(svc *corev1.Service) bool {
	if svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.ClusterIP == "" {
		return true
	}
	return svc.Spec.Type == corev1.ServiceTypeExternalName
}

// clusterIPOfFamily mirrors upstream proxyutil.GetClusterIPByFamily.
func clusterIPOfFamily(family corev1.IPFamily, svc *corev1.Service) (netip.Addr, bool) {
	var s string
	if len(svc.Spec.IPFamilies) == 0 {
		// Objects written before dual-stack: only spec.clusterIP.
		s = svc.Spec.ClusterIP
	} else {
		for i, f := range svc.Spec.IPFamilies {
			if f == family && i < len(svc.Spec.ClusterIPs) {
				s = svc.Spec.ClusterIPs[i]
			}
		}
	}
	addr, ok := parseAddrSloppy(s)
	if !ok || !isFamily(addr, family) {
		return netip.Addr{}, false
	}
	return addr, true
}

// newServicePort mirrors upstream newBaseServiceInfo
// (pkg/proxy/serviceport.go).
func newServicePort(family corev1.IPFamily, svc *corev1.Service, port *corev1.ServicePort, clusterIP netip.Addr) *ServicePort {
	protocol := port.Protocol
	if protocol == "" {
		protocol = corev1.ProtocolTCP
	}
	sp := &ServicePort{
		Name: ServicePortName{
			Namespace: svc.Namespace,
			Name:      svc.Name,
			Port:      port.Name,
			Protocol:  protocol,
		},
		Type:                svc.Spec.Type,
		ClusterIP:           clusterIP,
		Port:                port.Port,
		Protocol:            protocol,
		NodePort:            port.NodePort,
		TargetPort:          port.TargetPort,
		ExternalPolicyLocal: externalPolicyLocal(svc),
		InternalPolicyLocal: svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal,
		SessionAffinity:     svc.Spec.SessionAffinity,
	}
	if sp.SessionAffinity == "" {
		sp.SessionAffinity = corev1.ServiceAffinityNone
	}
	if sp.SessionAffinity == corev1.ServiceAffinityClientIP {
		sp.StickyMaxAgeSeconds = defaultStickyMaxAgeSeconds
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			sp.StickyMaxAgeSeconds = *c.ClientIP.TimeoutSeconds
		}
	}
	for _, s := range svc.Spec.ExternalIPs {
		if addr, ok := parseAddrSloppy(s); ok && isFamily(addr, family) {
			sp.ExternalIPs = append(sp.ExternalIPs, addr)
		}
	}
	sp.LoadBalancerSourceRanges = sourceRangesOfFamily(family, svc.Spec.LoadBalancerSourceRanges)
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		// Only VIP-mode load balancers get rules; "Proxy" mode ones send
		// traffic to the nodes themselves (upstream proxyutil.IsVIPMode).
		if ing.IP == "" || (ing.IPMode != nil && *ing.IPMode != corev1.LoadBalancerIPModeVIP) {
			continue
		}
		if addr, ok := parseAddrSloppy(ing.IP); ok && isFamily(addr, family) {
			sp.LoadBalancerVIPs = append(sp.LoadBalancerVIPs, addr)
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && sp.ExternalPolicyLocal {
		sp.HealthCheckNodePort = svc.Spec.HealthCheckNodePort
	}
	return sp
}

// externalPolicyLocal mirrors upstream apiservice.ExternalPolicyLocal.
func externalPolicyLocal(svc *corev1.Service) bool {
	accessible := svc.Spec.Type == corev1.ServiceTypeLoadBalancer ||
		svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
	return accessible && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// sourceRangesOfFamily parses loadBalancerSourceRanges, tolerating the
// whitespace padding that API validation lets through. A zero-length prefix
// means "allow any", the same as no ranges, so the result is then empty.
func sourceRangesOfFamily(family corev1.IPFamily, ranges []string) []netip.Prefix {
	var out []netip.Prefix
	for _, r := range ranges {
		p, ok := parsePrefixSloppy(strings.TrimSpace(r))
		if !ok || !isFamily(p.Addr(), family) {
			continue
		}
		if p.Bits() == 0 {
			return nil
		}
		out = append(out, p.Masked())
	}
	return out
}

// parsePrefixSloppy parses a CIDR like upstream's netutils.ParseCIDRSloppy
// (which MapCIDRsByIPFamily uses): the address as parseAddrSloppy reads it
// (IPv4 octets with leading zeros are decimal), the length in decimal
// digits. Before StrictIPCIDRValidation the API server stored ranges such
// as "010.0.0.0/8"; kube-proxy enforces them, and so must this proxy, not
// drop them and leave the load balancer open.
func parsePrefixSloppy(s string) (netip.Prefix, bool) {
	addrPart, bitsPart, found := strings.Cut(s, "/")
	if !found || bitsPart == "" || len(bitsPart) > 3 || strings.Trim(bitsPart, "0123456789") != "" {
		return netip.Prefix{}, false
	}
	addr, ok := parseAddrSloppy(addrPart)
	if !ok || addr.Zone() != "" {
		return netip.Prefix{}, false
	}
	bits, err := strconv.Atoi(bitsPart)
	if err != nil || bits > addr.BitLen() {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(addr, bits), true
}

func isFamily(addr netip.Addr, family corev1.IPFamily) bool {
	if family == corev1.IPv6Protocol {
		return addr.Is6()
	}
	return addr.Is4()
}

// parseAddrSloppy parses an IP address like upstream's
// netutils.ParseIPSloppy: IPv4 octets with leading zeros ("010.0.0.1") are
// read as decimal, and IPv4-mapped IPv6 addresses count as IPv4.
func parseAddrSloppy(s string) (netip.Addr, bool) {
	if addr, err := netip.ParseAddr(s); err == nil {
		return addr.Unmap(), true
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return netip.Addr{}, false
	}
	for i, p := range parts {
		trimmed := strings.TrimLeft(p, "0")
		if trimmed == "" && p != "" {
			trimmed = "0"
		}
		parts[i] = trimmed
	}
	addr, err := netip.ParseAddr(strings.Join(parts, "."))
	if err != nil {
		return netip.Addr{}, false
	}
	return addr, true
}

func addressTypeOf(family corev1.IPFamily) discoveryv1.AddressType {
	if family == corev1.IPv6Protocol {
		return discoveryv1.AddressTypeIPv6
	}
	return discoveryv1.AddressTypeIPv4
}

type serviceKey struct{ namespace, name string }

// groupEndpointSlices indexes usable slices by the service they belong to,
// each group sorted by slice name so that results never depend on input
// order. Upstream: endpointSliceCacheKeys and the family check in
// EndpointsChangeTracker.EndpointSliceUpdate.
func groupEndpointSlices(family corev1.IPFamily, all []*discoveryv1.EndpointSlice) map[serviceKey][]*discoveryv1.EndpointSlice {
	want := addressTypeOf(family)
	groups := map[serviceKey][]*discoveryv1.EndpointSlice{}
	for _, s := range all {
		if s == nil || s.AddressType != want || s.Namespace == "" || s.Name == "" {
			continue
		}
		svcName := s.Labels[discoveryv1.LabelServiceName]
		if svcName == "" {
			continue
		}
		k := serviceKey{s.Namespace, svcName}
		groups[k] = append(groups[k], s)
	}
	for _, g := range groups {
		slices.SortFunc(g, func(a, b *discoveryv1.EndpointSlice) int { return cmp.Compare(a.Name, b.Name) })
	}
	return groups
}

// ParseAddrSloppy parses an IP address as upstream's
// netutils.ParseIPSloppy does (IPv4 octets with leading zeros allowed),
// an IPv4-mapped IPv6 address as the IPv4 one.
func ParseAddrSloppy(s string) (netip.Addr, bool) { return parseAddrSloppy(s) }
