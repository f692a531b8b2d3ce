package ui

import (
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// ServiceRefs are the Service ports the page offers traffic to: every TCP
// port of a Service with a cluster IP, but the API server's own
// (default/kubernetes) and kube-system's (cluster DNS does not answer
// GET /hostname), sorted by key. A dual-stack Service (two
// spec.clusterIPs) gives a ref per cluster IP: the primary one's key is
// the single-stack key, the other's says its family.
func ServiceRefs(st *labstore.State) []ServiceRef {
	refs := []ServiceRef{}
	for _, svc := range st.Services {
		if !offered(svc) {
			continue
		}
		ips := clusterIPs(svc)
		for _, p := range svc.Spec.Ports {
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				continue
			}
			port := strconv.Itoa(int(p.Port))
			key := svc.Namespace + "/" + svc.Name + ":" + port
			for i, ip := range ips {
				ref := ServiceRef{Key: key, Target: net.JoinHostPort(ip, port)}
				if len(ips) > 1 {
					ref.Family = familyOf(ip)
				}
				if i > 0 {
					ref.Key += " (" + ref.Family + ")"
				}
				refs = append(refs, ref)
			}
		}
	}
	slices.SortFunc(refs, func(a, b ServiceRef) int {
		if a.Key < b.Key {
			return -1
		}
		if a.Key > b.Key {
			return 1
		}
		return 0
	})
	return refs
}

// offered: a Service with a cluster IP, neither the API server's nor
// kube-system's.
func offered(svc *corev1.Service) bool {
	ip := svc.Spec.ClusterIP
	return ip != "" && ip != corev1.ClusterIPNone && svc.Namespace != "kube-system" &&
		(svc.Namespace != "default" || svc.Name != "kubernetes")
}

// clusterIPs are spec.clusterIPs, primary first, or spec.clusterIP alone
// when the list is empty or does not start with it (as the API server
// keeps them).
func clusterIPs(svc *corev1.Service) []string {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 || ips[0] != svc.Spec.ClusterIP {
		return []string{svc.Spec.ClusterIP}
	}
	return ips
}

// familyOf is FamilyIPv6 for an address with a colon, else FamilyIPv4.
func familyOf(ip string) string {
	if strings.Contains(ip, ":") {
		return FamilyIPv6
	}
	return FamilyIPv4
}
