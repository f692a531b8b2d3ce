package iptables_test

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/model"
)

// The test cluster: pods in 10.244.0.0/16, services in 10.96.0.0/16, this
// node is node-a at 192.168.0.10; node-b is another node.
const (
	testClusterCIDR = "10.244.0.0/16"
	testNodeName    = "node-a"
	testOtherNode   = "node-b"
	testNodeIP      = "192.168.0.10"
	testOutsideIP   = "203.0.113.50" // a client outside the cluster
)

var testNodeIPs = []netip.Addr{netip.MustParseAddr(testNodeIP)}

func ptr[T any](v T) *T { return &v }

// svc builds a Service; edit modifies it further.
func svc(ns, name, clusterIP string, ports []corev1.ServicePort, edit ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: clusterIP,
			Ports:     ports,
		},
	}
	for _, e := range edit {
		e(s)
	}
	return s
}

func port(name string, protocol corev1.Protocol, port, nodePort int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: protocol, Port: port, NodePort: nodePort}
}

func nodePortType(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }

func etpLocal(s *corev1.Service) {
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
}

// epSlice builds an EndpointSlice for service ns/name with the given ports
// (name → number, protocol TCP unless the name starts with "dns") and
// endpoints.
func epSlice(ns, name string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      name + "-abcde",
			Labels:    map[string]string{discoveryv1.LabelServiceName: name},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       ports,
		Endpoints:   eps,
	}
}

func epPort(name string, protocol corev1.Protocol, port int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: ptr(name), Protocol: ptr(protocol), Port: ptr(port)}
}

func ep(ip, node string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{ip}}
	if node != "" {
		e.NodeName = ptr(node)
	}
	return e
}

type cluster struct {
	services []*corev1.Service
	slices   []*discoveryv1.EndpointSlice
}

func (c cluster) snapshot() *model.Snapshot {
	return model.Build(c.services, c.slices, testNodeName)
}

func testOptions() iptables.Options {
	return iptables.Options{
		ClusterCIDR: testClusterCIDR,
		RandomFully: true,
		NodeIP:      netip.MustParseAddr(testNodeIP),
	}
}

func newRenderer(t testing.TB, opts iptables.Options) *iptables.Renderer {
	t.Helper()
	r, err := iptables.NewRenderer(opts)
	if err != nil {
		t.Fatalf("NewRenderer: %v", err)
	}
	return r
}

// clusterIPService is a ClusterIP service default/web:http on 10.96.0.20
// with n endpoints 10.244.1.1 .. 10.244.1.n on port 8080.
func clusterIPService(n int) cluster {
	var eps []discoveryv1.Endpoint
	for i := 1; i <= n; i++ {
		eps = append(eps, ep(netip.AddrFrom4([4]byte{10, 244, 1, byte(i)}).String(), testOtherNode))
	}
	return cluster{
		services: []*corev1.Service{svc("default", "web", "10.96.0.20", []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)})},
		slices:   []*discoveryv1.EndpointSlice{epSlice("default", "web", []discoveryv1.EndpointPort{epPort("http", corev1.ProtocolTCP, 8080)}, eps...)},
	}
}
