package model

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ServicePort is one port of one Service as the proxy sees it, with the
// endpoints that back it.
//
// Upstream: proxy.BaseServicePortInfo (pkg/proxy/serviceport.go) plus the
// service port's entry in proxy.EndpointsMap.
type ServicePort struct {
	Name ServicePortName
	// Type is the Service type (ClusterIP, NodePort, LoadBalancer).
	Type corev1.ServiceType

	// ClusterIP is the service's cluster IP of the snapshot's IP family.
	ClusterIP netip.Addr
	// Port is the service port (spec.ports[].port).
	Port int32
	// Protocol is TCP, UDP or SCTP; the same as Name.Protocol.
	Protocol corev1.Protocol
	// NodePort is spec.ports[].nodePort, 0 when the port has none.
	NodePort int32
	// TargetPort is spec.ports[].targetPort as written. The proxy does not
	// use it: endpoint ports come from the EndpointSlices, which already
	// resolved named target ports.
	TargetPort intstr.IntOrString

	// ExternalIPs are spec.externalIPs of the snapshot's family.
	ExternalIPs []netip.Addr
	// LoadBalancerVIPs are status.loadBalancer.ingress IPs (of the
	// snapshot's family) whose ipMode is VIP or unset.
	LoadBalancerVIPs []netip.Addr
	// LoadBalancerSourceRanges are spec.loadBalancerSourceRanges of the
	// snapshot's family; empty when any of them is a zero-length prefix
	// ("allow all"), as upstream.
	LoadBalancerSourceRanges []netip.Prefix
	// HealthCheckNodePort is set for LoadBalancer services with
	// externalTrafficPolicy Local.
	HealthCheckNodePort int32

	// ExternalPolicyLocal is true when the service is externally accessible
	// and externalTrafficPolicy is Local.
	ExternalPolicyLocal bool
	// InternalPolicyLocal is true when internalTrafficPolicy is Local.
	InternalPolicyLocal bool

	// SessionAffinity is None or ClientIP.
	SessionAffinity corev1.ServiceAffinity
	// StickyMaxAgeSeconds is the ClientIP affinity timeout; 0 without
	// affinity.
	StickyMaxAgeSeconds int32

	// Endpoints are all endpoints for this port, deduplicated by IP:port and
	// sorted by their "IP:port" string as upstream does. They include
	// not-ready ones; see CategorizeEndpoints for which are used.
	Endpoints []Endpoint
}

// Endpoint is one backend address of a service port.
//
// Upstream: proxy.BaseEndpointInfo (pkg/proxy/endpoint.go).
type Endpoint struct {
	IP   netip.Addr
	Port int32
	// Ready is the EndpointSlice ready condition (nil counts as true).
	Ready bool
	// Serving is the serving condition (nil counts as true).
	Serving bool
	// Terminating is the terminating condition (nil counts as false).
	Terminating bool
	// NodeName is the node the endpoint runs on, "" when unknown.
	NodeName string
	// IsLocal is true when NodeName is the snapshot's node.
	IsLocal bool
	// Weight is the endpoint's IPVS real-server weight (0 means upstream's
	// fixed 1), from the slice's WeightsAnnotation. iptables mode ignores it.
	Weight int32
}

// String gives "IP:port" ("[IPv6]:port" for IPv6), the form upstream uses
// as the endpoint's identity, in DNAT targets and in KUBE-SEP chain hashes.
func (e Endpoint) String() string {
	return netip.AddrPortFrom(e.IP, uint16(e.Port)).String()
}

// ExternallyAccessible reports whether the port is reachable other than by
// its cluster IP (NodePort, external IP or load balancer IP).
func (sp *ServicePort) ExternallyAccessible() bool {
	return sp.NodePort != 0 || len(sp.LoadBalancerVIPs) != 0 || len(sp.ExternalIPs) != 0
}

// UsesClusterEndpoints reports whether traffic is ever sent to endpoints
// under the "Cluster" policy: for internal traffic with the Cluster
// internal policy, and for any externally accessible port (even with
// externalTrafficPolicy Local, pod traffic to external IPs short-circuits to
// the Cluster chain).
func (sp *ServicePort) UsesClusterEndpoints() bool {
	return !sp.InternalPolicyLocal || sp.ExternallyAccessible()
}

// UsesLocalEndpoints reports whether traffic is ever restricted to this
// node's endpoints.
func (sp *ServicePort) UsesLocalEndpoints() bool {
	return sp.InternalPolicyLocal || (sp.ExternalPolicyLocal && sp.ExternallyAccessible())
}

// Equal reports whether two service ports, endpoints included, are
// identical. Renderers use it to decide whether a cached rendering can be
// reused.
func (sp *ServicePort) Equal(o *ServicePort) bool {
	if sp == o {
		return true
	}
	if sp == nil || o == nil {
		return false
	}
	return sp.Name == o.Name &&
		sp.Type == o.Type &&
		sp.ClusterIP == o.ClusterIP &&
		sp.Port == o.Port &&
		sp.Protocol == o.Protocol &&
		sp.NodePort == o.NodePort &&
		sp.TargetPort == o.TargetPort &&
		sp.HealthCheckNodePort == o.HealthCheckNodePort &&
		sp.ExternalPolicyLocal == o.ExternalPolicyLocal &&
		sp.InternalPolicyLocal == o.InternalPolicyLocal &&
		sp.SessionAffinity == o.SessionAffinity &&
		sp.StickyMaxAgeSeconds == o.StickyMaxAgeSeconds &&
		slices.Equal(sp.ExternalIPs, o.ExternalIPs) &&
		slices.Equal(sp.LoadBalancerVIPs, o.LoadBalancerVIPs) &&
		slices.Equal(sp.LoadBalancerSourceRanges, o.LoadBalancerSourceRanges) &&
		slices.Equal(sp.Endpoints, o.Endpoints)
}
