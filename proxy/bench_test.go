package proxy

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
	"github.com/svclab/svclab/proxy/sources"
)

// BenchmarkWholePathOneEndpointChanged is what one endpoint change costs
// the iptables mode from the source's event to the kernel payload: the
// change as a source delivers it (sources.Changes), the model update
// (model.Tracker), the snapshot, and the renderer's partial payload. Only
// iptables-restore itself is left out.
func BenchmarkWholePathOneEndpointChanged(b *testing.B) {
	for _, size := range []struct{ services, endpoints int }{{1000, 2}, {10000, 10}} {
		svcs, slices := modeltest.Cluster(size.services, size.endpoints)
		mid := slices[len(slices)/2]
		variants := []*discoveryv1.EndpointSlice{
			modeltest.WithEndpointChanged(mid, 1<<20), modeltest.WithEndpointChanged(mid, 1<<20+1),
		}
		b.Run(fmt.Sprintf("services=%d/endpoints=%d", size.services, size.endpoints), func(b *testing.B) {
			tr := model.NewTracker(corev1.IPv4Protocol, modeltest.NodeName)
			tr.Replace(svcs, slices)
			r, err := iptables.NewRenderer(iptables.Options{ClusterCIDR: modeltest.ClusterCIDR})
			if err != nil {
				b.Fatal(err)
			}
			r.Applied(r.Render(tr.Snapshot()))
			b.ReportAllocs()
			var res *iptables.Result
			i := 0
			for b.Loop() {
				sl := variants[i%2]
				i++
				applyChanges(tr, &sources.Changes{EndpointSlices: map[sources.Key]*discoveryv1.EndpointSlice{{Namespace: sl.Namespace, Name: sl.Name}: sl}})
				res = r.Render(tr.Snapshot())
				r.Applied(res)
			}
			if res.ChangedServicePorts != 1 {
				b.Fatalf("ChangedServicePorts = %d, want 1", res.ChangedServicePorts)
			}
			b.ReportMetric(float64(res.Bytes()), "restore-bytes")
		})
	}
}
