package modeltest

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Cluster is a large, regular cluster for benchmarks: services Services in
// namespaces of 100, each a ClusterIP Service (every tenth a NodePort) with
// one port "http" 80/TCP and one EndpointSlice of endpoints ready
// endpoints on OtherNode, target port 8080. Every Service and slice is
// what an API server would return (defaults filled in).
func Cluster(services, endpoints int) ([]*corev1.Service, []*discoveryv1.EndpointSlice) {
	svcs := make([]*corev1.Service, 0, services)
	slices := make([]*discoveryv1.EndpointSlice, 0, services)
	for i := range services {
		svc, sl := ClusterObjects(i, endpoints)
		svcs = append(svcs, svc)
		slices = append(slices, sl)
	}
	return svcs, slices
}

// ClusterObjects is the i-th Service of Cluster and its slice.
func ClusterObjects(i, endpoints int) (*corev1.Service, *discoveryv1.EndpointSlice) {
	ns, name := fmt.Sprintf("ns%05d", i/100), fmt.Sprintf("svc%05d", i)
	ip := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}).String()
	single := corev1.IPFamilyPolicySingleStack
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "1"},
		Spec: corev1.ServiceSpec{
			Type:            corev1.ServiceTypeClusterIP,
			ClusterIP:       ip,
			ClusterIPs:      []string{ip},
			IPFamilies:      []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:  &single,
			SessionAffinity: corev1.ServiceAffinityNone,
			Ports:           []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if i%10 == 0 {
		svc.Spec.Type = corev1.ServiceTypeNodePort
		svc.Spec.Ports[0].NodePort = int32(30000 + i%2768)
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	portName, port, proto := "http", int32(8080), corev1.ProtocolTCP
	sl := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-abcde", ResourceVersion: "1",
			Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
	}
	for j := range endpoints {
		sl.Endpoints = append(sl.Endpoints, endpoint(i*endpoints+j))
	}
	return svc, sl
}

// WithEndpointChanged returns a copy of sl whose first endpoint has the
// address of endpoint number k (pick k beyond the cluster's endpoints for a
// new address), as an update of the slice would be.
func WithEndpointChanged(sl *discoveryv1.EndpointSlice, k int) *discoveryv1.EndpointSlice {
	c := sl.DeepCopy()
	c.Endpoints[0] = endpoint(k)
	return c
}

func endpoint(k int) discoveryv1.Endpoint {
	node, ready, serving, terminating := OtherNode, true, true, false
	return discoveryv1.Endpoint{
		Addresses:  []string{netip.AddrFrom4([4]byte{10, byte(128 + k>>16), byte(k >> 8), byte(k)}).String()},
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		NodeName:   &node,
	}
}
