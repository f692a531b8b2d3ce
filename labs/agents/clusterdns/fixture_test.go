package clusterdns

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// labObjects is a lab with the kube-dns Service and its pod, a ClusterIP
// Service with two pods, a headless Service (a StatefulSet-like pod with a
// hostname, a pod without, a pod not ready), a headless Service that
// publishes not-ready addresses, a headless Service without endpoints and
// an ExternalName Service.
func labObjects() Objects {
	return Objects{
		Serial: 7,
		Services: []*corev1.Service{
			service("kube-system", "kube-dns", "10.96.0.10",
				port("dns", corev1.ProtocolUDP, 53), port("dns-tcp", corev1.ProtocolTCP, 53), port("metrics", corev1.ProtocolTCP, 9153)),
			service("default", "web", "10.96.0.11", port("http", corev1.ProtocolTCP, 80), port("", corev1.ProtocolTCP, 81)),
			service("demo", "db", corev1.ClusterIPNone, port("pg", corev1.ProtocolTCP, 5432)),
			withPublishNotReady(service("demo", "peers", corev1.ClusterIPNone, port("gossip", corev1.ProtocolUDP, 7946))),
			service("demo", "nobody", corev1.ClusterIPNone, port("http", corev1.ProtocolTCP, 80)),
			{
				ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "search"},
				Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "search.example.com"},
			},
		},
		EndpointSlices: []*discoveryv1.EndpointSlice{
			slice("kube-system", "kube-dns", ep("10.244.1.2", "", true)),
			slice("default", "web", ep("10.244.1.3", "", true), ep("10.244.2.2", "", true)),
			slice("demo", "db", ep("10.244.1.4", "db-0", true), ep("10.244.2.3", "", true), ep("10.244.2.4", "db-2", false)),
			slice("demo", "peers", ep("10.244.1.5", "", false)),
			slice("demo", "nobody"),
		},
	}
}

func service(ns, name, clusterIP string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP, Ports: ports},
	}
}

func withPublishNotReady(s *corev1.Service) *corev1.Service {
	s.Spec.PublishNotReadyAddresses = true
	return s
}

func port(name string, proto corev1.Protocol, n int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: proto, Port: n}
}

func ep(ip, hostname string, ready bool) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}
	if hostname != "" {
		e.Hostname = &hostname
	}
	return e
}

func slice(ns, svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: svc + "-abcde",
			Labels: map[string]string{discoveryv1.LabelServiceName: svc},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
	}
}
