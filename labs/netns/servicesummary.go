package netns

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/netns/workload"
)

// describeService says what apply made of a new Service: its cluster IP
// and node ports, its load balancer address (or why it is pending), its
// external IPs (and whether the lab's router sends them to the cluster),
// or the name an ExternalName Service stands for.
func (l *Lab) describeService(svc *corev1.Service) string {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return "ExternalName " + svc.Spec.ExternalName + " (no cluster IP, no proxy rules)"
	}
	s := "cluster IP " + svc.Spec.ClusterIP + nodePorts(svc.Spec.Ports)
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		switch vip := workload.LoadBalancerIngress(svc); {
		case vip.IsValid():
			s += ", load balancer IP " + vip.String()
		case svc.Spec.LoadBalancerClass != nil:
			s += fmt.Sprintf(", load balancer IP <pending> (loadBalancerClass %q is not the lab's load balancer)", *svc.Spec.LoadBalancerClass)
		default:
			s += ", load balancer IP <pending> (the lab file declares no spec.loadBalancer.pool)"
		}
		if svc.Spec.HealthCheckNodePort != 0 {
			s += fmt.Sprintf(", health check node port %d", svc.Spec.HealthCheckNodePort)
		}
	}
	if len(svc.Spec.ExternalIPs) > 0 {
		var unrouted []string
		for _, ip := range svc.Spec.ExternalIPs {
			if a, err := netip.ParseAddr(ip); err == nil && !l.routesToCluster(a) {
				unrouted = append(unrouted, ip)
			}
		}
		s += ", external IPs " + strings.Join(svc.Spec.ExternalIPs, ",")
		if len(unrouted) > 0 {
			s += " (" + strings.Join(unrouted, ",") + ": outside the lab file's spec.externalIPs, so the router does not send it to the cluster; only the nodes reach it)"
		}
	}
	return s
}

// routesToCluster says whether the lab's router sends a to the first node
// (spec.externalIPs or spec.loadBalancer.pool).
func (l *Lab) routesToCluster(a netip.Addr) bool {
	if l.Topology.Spec.LoadBalancer.Pool.Contains(a) {
		return true
	}
	for _, p := range l.Topology.Spec.ExternalIPs {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
