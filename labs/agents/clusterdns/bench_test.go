package clusterdns

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/fixtures"
)

// BenchmarkRespond is one answer from the index (a search-path miss, then
// the hit, as a pod's resolver asks): the server's work per query, less
// the socket. Goal: under 50 µs per query on the 2-core CI machine (a pod's lookup of a
// short name asks up to 8 questions).
func BenchmarkRespond(b *testing.B) {
	ix := NewIndex("", labObjects())
	miss := ask("web.default.svc.cluster.local.default.svc.cluster.local.", dns.TypeA)
	hit := ask("web.default.svc.cluster.local.", dns.TypeA)
	b.ReportAllocs()
	for b.Loop() {
		ix.Respond(miss, true)
		ix.Respond(hit, true)
	}
}

// BenchmarkNewIndex rebuilds the index for 1,000 Services with one
// endpoint each (what the server does after every change of the store).
func BenchmarkNewIndex(b *testing.B) {
	objs := labObjects()
	for i := 0; i < 1000; i++ {
		name := "svc" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
		vip := netip.AddrFrom4([4]byte{10, 96, byte(1 + i/250), byte(1 + i%250)})
		pod := netip.AddrFrom4([4]byte{10, 244, byte(1 + i/250), byte(1 + i%250)})
		objs.Services = append(objs.Services, fixtures.Service("bench", name, vip.String(), []corev1.ServicePort{fixtures.TCPServicePort("http", 80)}))
		objs.EndpointSlices = append(objs.EndpointSlices, fixtures.EndpointSlice("bench", name, nil, fixtures.Endpoint(pod.String(), "")))
	}
	b.ReportAllocs()
	for b.Loop() {
		NewIndex("", objs)
	}
}
