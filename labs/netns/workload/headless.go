package workload

import (
	corev1 "k8s.io/api/core/v1"
)

// checkHeadless applies the API server's rules for a headless Service
// (`clusterIP: None`): it may have no ports, and it cannot be a NodePort
// Service. A headless Service has no proxy rules; its EndpointSlices are
// made all the same (they are what DNS answers with).
func checkHeadless(svc *corev1.Service, source, where string) error {
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		return nil
	}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		return errorf(source, "%s: spec.clusterIP: Invalid value: \"None\": may not be set to 'None' for %s services", where, svc.Spec.Type)
	}
	return nil
}
