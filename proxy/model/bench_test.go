package model

import (
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
)

// BenchmarkBuild converts 10k services with 10 endpoints each, the size
// the iptables renderer is benchmarked at.
func BenchmarkBuild(b *testing.B) {
	var services []*corev1.Service
	var slices []*discoveryv1.EndpointSlice
	for i := range 10000 {
		ns, name := fmt.Sprintf("ns%d", i/100), fmt.Sprintf("svc%d", i)
		services = append(services, fixtures.Service(ns, name, netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}).String(), []corev1.ServicePort{fixtures.TCPServicePort("http", 80)}))
		var eps []discoveryv1.Endpoint
		for j := range 10 {
			k := i*10 + j
			eps = append(eps, fixtures.Endpoint(netip.AddrFrom4([4]byte{10, byte(128 + k>>16), byte(k >> 8), byte(k)}).String(), "node-b"))
		}
		slices = append(slices, fixtures.NamedEndpointSlice(ns, name, name+"-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, eps...))
	}
	b.ReportAllocs()
	for b.Loop() {
		if snap := Build(services, slices, "node-a"); len(snap.ServicePorts) != 10000 {
			b.Fatal(len(snap.ServicePorts))
		}
	}
}
