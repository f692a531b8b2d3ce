package iptables_test

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
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
		eps = append(eps, fixtures.Endpoint(netip.AddrFrom4([4]byte{10, 244, 1, byte(i)}).String(), testOtherNode))
	}
	return cluster{
		services: []*corev1.Service{fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})},
		slices:   []*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, eps...)},
	}
}
