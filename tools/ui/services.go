package ui

import (
	"net"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// ServiceRefs are the Service ports the page offers traffic to: every TCP
// port of a Service with a cluster IP, but the API server's own
// (default/kubernetes) and kube-system's (cluster DNS does not answer
// GET /hostname), sorted by key.
func ServiceRefs(st *labstore.State) []ServiceRef {
	refs := []ServiceRef{}
	for _, svc := range st.Services {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone || svc.Namespace == "kube-system" ||
			(svc.Namespace == "default" && svc.Name == "kubernetes") {
			continue
		}
		for _, p := range svc.Spec.Ports {
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				continue
			}
			port := strconv.Itoa(int(p.Port))
			refs = append(refs, ServiceRef{
				Key:    svc.Namespace + "/" + svc.Name + ":" + port,
				Target: net.JoinHostPort(ip, port),
			})
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
