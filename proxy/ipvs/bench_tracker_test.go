package ipvs

import (
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/proxy/model"
)

// scaleObjects is the i-th of scaleSnapshot's Services as API objects, with
// its one EndpointSlice of e endpoints (the first on this node), and that
// slice again with endpoint 3 moved to 10.250.0.1.
func scaleObjects(i, e int) (*corev1.Service, *discoveryv1.EndpointSlice, *discoveryv1.EndpointSlice) {
	name := fmt.Sprintf("svc-%05d", i)
	ip := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}).String()
	port := fixtures.TCPServicePort("http", 80)
	var edits []fixtures.ServiceEdit
	if i%10 == 0 {
		port.NodePort = int32(30000 + i/10)
		edits = append(edits, fixtures.NodePortType)
	}
	svc := fixtures.Service("scale", name, ip, []corev1.ServicePort{port}, edits...)
	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	slice := func(moved bool) *discoveryv1.EndpointSlice {
		sl := fixtures.NamedEndpointSlice("scale", name, name+"-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)})
		for j := range e {
			ip, node := fmt.Sprintf("10.%d.%d.%d", 100+j, i>>8, i&0xff), "other-node"
			if j == 0 {
				node = testNode
			}
			if moved && j == 3 {
				ip = "10.250.0.1"
			}
			sl.Endpoints = append(sl.Endpoints, fixtures.Endpoint(ip, node))
		}
		return sl
	}
	return svc, slice(false), slice(true)
}

// BenchmarkSyncAtScaleTracker is BenchmarkSyncAtScaleFakeKernel with the
// snapshots of a model.Tracker, as the proxy's sync loop gets them: a
// partial sync then recomputes and diffs only the service ports that
// changed (state.go). Each op is the tracker's Snapshot and the Sync.
func BenchmarkSyncAtScaleTracker(b *testing.B) {
	const services, endpoints = 10_000, 10
	tr := model.NewTracker(corev1.IPv4Protocol, testNode)
	var changed, back *discoveryv1.EndpointSlice
	for i := range services {
		svc, sl, moved := scaleObjects(i, endpoints)
		tr.SetService(svc)
		tr.SetEndpointSlice(sl)
		if i == services/2+1 { // a ClusterIP-only Service
			changed, back = moved, sl
		}
	}
	be, _, _ := newTestBackend(&testing.T{}, Options{})
	if _, err := be.Sync(tr.Snapshot()); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, change func(i int), wantOps int) {
		runSyncs(b, func(i int) (SyncResult, error) {
			change(i)
			res, err := be.Sync(tr.Snapshot())
			if err == nil && wantOps >= 0 && res.Ops != wantOps {
				err = fmt.Errorf("%d ops, want %d:\n%s", res.Ops, wantOps, res.Plan)
			}
			return res, err
		})
	}
	b.Run("unchanged", func(b *testing.B) {
		run(b, func(int) {}, 0)
	})
	b.Run("one-endpoint-changed", func(b *testing.B) {
		run(b, func(i int) {
			if i%2 == 0 {
				tr.SetEndpointSlice(changed)
			} else {
				tr.SetEndpointSlice(back)
			}
		}, 2)
	})
	b.Run("full", func(b *testing.B) {
		run(b, func(int) { be.ForceFullSync() }, -1)
	})
}
