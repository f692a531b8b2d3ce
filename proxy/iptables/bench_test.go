package iptables_test

import (
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/model"
)

// benchSnapshot builds, without API objects, n ClusterIP+NodePort-less
// services with eps endpoints each; every tenth service is a NodePort.
func benchSnapshot(n, eps int) *model.Snapshot {
	snap := &model.Snapshot{NodeName: testNodeName, Family: corev1.IPv4Protocol}
	for i := range n {
		sp := &model.ServicePort{
			Name:            model.ServicePortName{Namespace: fmt.Sprintf("ns%05d", i/100), Name: fmt.Sprintf("svc%05d", i), Port: "http", Protocol: corev1.ProtocolTCP},
			Type:            corev1.ServiceTypeClusterIP,
			ClusterIP:       netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}),
			Port:            80,
			Protocol:        corev1.ProtocolTCP,
			SessionAffinity: corev1.ServiceAffinityNone,
		}
		if i%10 == 0 {
			sp.Type = corev1.ServiceTypeNodePort
			sp.NodePort = int32(30000 + i%2768)
		}
		for j := range eps {
			k := i*eps + j
			sp.Endpoints = append(sp.Endpoints, model.Endpoint{
				IP:    netip.AddrFrom4([4]byte{10, byte(128 + k>>16), byte(k >> 8), byte(k)}),
				Port:  8080,
				Ready: true, Serving: true,
				NodeName: testOtherNode,
			})
		}
		snap.ServicePorts = append(snap.ServicePorts, sp)
	}
	snap.SortServicePorts()
	return snap
}

// withOneEndpointChanged returns a snapshot sharing every service port with
// snap except the middle one, whose first endpoint has a new IP.
func withOneEndpointChanged(snap *model.Snapshot, ip netip.Addr) *model.Snapshot {
	next := *snap
	next.ServicePorts = append([]*model.ServicePort(nil), snap.ServicePorts...)
	i := len(next.ServicePorts) / 2
	sp := *next.ServicePorts[i]
	sp.Endpoints = append([]model.Endpoint(nil), sp.Endpoints...)
	sp.Endpoints[0].IP = ip
	next.ServicePorts[i] = &sp
	return &next
}

var benchSizes = []struct{ services, endpoints int }{
	{1000, 2}, {1000, 10}, {5000, 2}, {5000, 10}, {10000, 2}, {10000, 10},
}

// BenchmarkRenderFullCold renders a full sync with a new renderer: every
// service port is rendered and hashed.
func BenchmarkRenderFullCold(b *testing.B) {
	for _, size := range benchSizes {
		snap := benchSnapshot(size.services, size.endpoints)
		b.Run(fmt.Sprintf("services=%d/endpoints=%d", size.services, size.endpoints), func(b *testing.B) {
			b.ReportAllocs()
			var bytes int
			for b.Loop() {
				r, _ := iptables.NewRenderer(testOptions())
				bytes = r.Render(snap).Bytes()
			}
			b.ReportMetric(float64(bytes), "restore-bytes")
		})
	}
}

// BenchmarkRenderFullWarm renders a forced full sync (after Reset) with
// warm caches: the hourly or after-canary full resync. Each round gets a
// fresh deep copy of the snapshot, as a full resync's List and
// model.Tracker.Replace give new service ports, so the renderer compares
// every one by content (reusing the same snapshot would only compare
// pointers and measure far less).
func BenchmarkRenderFullWarm(b *testing.B) {
	for _, size := range benchSizes {
		snap := benchSnapshot(size.services, size.endpoints)
		copies := []*model.Snapshot{deepCopy(snap), deepCopy(snap)}
		b.Run(fmt.Sprintf("services=%d/endpoints=%d", size.services, size.endpoints), func(b *testing.B) {
			r, _ := iptables.NewRenderer(testOptions())
			r.Applied(r.Render(snap))
			b.ReportAllocs()
			var bytes, i int
			for b.Loop() {
				r.Reset()
				res := r.Render(copies[i%2])
				r.Applied(res)
				bytes = res.Bytes()
				i++
			}
			b.ReportMetric(float64(bytes), "restore-bytes")
		})
	}
}

// deepCopy gives every service port a new identity, as model.Build does on
// each call, so that the renderer must compare contents, not pointers.
func deepCopy(snap *model.Snapshot) *model.Snapshot {
	next := *snap
	next.ServicePorts = make([]*model.ServicePort, len(snap.ServicePorts))
	for i, sp := range snap.ServicePorts {
		c := *sp
		c.Endpoints = append([]model.Endpoint(nil), sp.Endpoints...)
		next.ServicePorts[i] = &c
	}
	return &next
}

// BenchmarkRenderOnlyOneEndpointChanged is the renderer alone on the
// partial sync after one endpoint of one service changed: it starts from
// a snapshot, leaving out reading the change and updating the model (see
// proxy's BenchmarkWholePathOneEndpointChanged for event → payload). The
// snapshots share every unchanged service port with the previous one, as
// model.Tracker's do.
func BenchmarkRenderOnlyOneEndpointChanged(b *testing.B) {
	for _, size := range benchSizes {
		base := benchSnapshot(size.services, size.endpoints)
		variants := []*model.Snapshot{
			withOneEndpointChanged(base, netip.MustParseAddr("10.250.0.1")),
			withOneEndpointChanged(base, netip.MustParseAddr("10.250.0.2")),
		}
		b.Run(fmt.Sprintf("services=%d/endpoints=%d", size.services, size.endpoints), func(b *testing.B) {
			r, _ := iptables.NewRenderer(testOptions())
			r.Applied(r.Render(base))
			b.ReportAllocs()
			var bytes, changed int
			i := 0
			for b.Loop() {
				res := r.Render(variants[i%2])
				r.Applied(res)
				bytes, changed = res.Bytes(), res.ChangedServicePorts
				i++
			}
			if changed != 1 {
				b.Fatalf("ChangedServicePorts = %d, want 1", changed)
			}
			b.ReportMetric(float64(bytes), "restore-bytes")
		})
	}
}
