package clusterdns

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/fixtures"
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
			fixtures.Service("kube-system", "kube-dns", "10.96.0.10", []corev1.ServicePort{
				fixtures.ServicePort("dns", corev1.ProtocolUDP, 53, 0), fixtures.TCPServicePort("dns-tcp", 53), fixtures.TCPServicePort("metrics", 9153)}),
			fixtures.Service("default", "web", "10.96.0.11", []corev1.ServicePort{fixtures.TCPServicePort("http", 80), fixtures.TCPServicePort("", 81)}),
			fixtures.Service("demo", "db", corev1.ClusterIPNone, []corev1.ServicePort{fixtures.TCPServicePort("pg", 5432)}),
			fixtures.Service("demo", "peers", corev1.ClusterIPNone, []corev1.ServicePort{fixtures.ServicePort("gossip", corev1.ProtocolUDP, 7946, 0)},
				fixtures.PublishNotReadyAddresses),
			fixtures.Service("demo", "nobody", corev1.ClusterIPNone, []corev1.ServicePort{fixtures.TCPServicePort("http", 80)}),
			{
				ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "search"},
				Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "search.example.com"},
			},
		},
		EndpointSlices: []*discoveryv1.EndpointSlice{
			fixtures.EndpointSlice("kube-system", "kube-dns", nil, fixtures.Endpoint("10.244.1.2", "")),
			fixtures.EndpointSlice("default", "web", nil, fixtures.Endpoint("10.244.1.3", ""), fixtures.Endpoint("10.244.2.2", "")),
			fixtures.EndpointSlice("demo", "db", nil,
				fixtures.Endpoint("10.244.1.4", "", fixtures.Hostname("db-0")), fixtures.Endpoint("10.244.2.3", ""),
				fixtures.Endpoint("10.244.2.4", "", fixtures.Hostname("db-2"), fixtures.NotReady)),
			fixtures.EndpointSlice("demo", "peers", nil, fixtures.Endpoint("10.244.1.5", "", fixtures.NotReady)),
			fixtures.EndpointSlice("demo", "nobody", nil),
		},
	}
}
