package proxy

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/proxy/sources"
)

// TestLoopFollowsTheLabStore: the loop on a real lab store sees a Service
// and its EndpointSlice written after its first sync, then their deletion,
// through the store's per-file changes (no List after the first).
func TestLoopFollowsTheLabStore(t *testing.T) {
	st := labstore.OpenDir(t.TempDir())
	be := &fakeBackend{}
	ch := startLoop(t, &Loop{Source: &sources.LabStore{Store: st}, Backend: be, SyncPeriod: time.Hour})
	if o := next(t, ch); o.Err != nil || o.Stats.ServicePorts != 0 {
		t.Fatalf("first sync: %+v", o)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "legacy"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.254.0.11", Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	name, port, proto := "http", int32(8080), corev1.ProtocolTCP
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "legacy-1", Labels: map[string]string{discoveryv1.LabelServiceName: "legacy"}},
		AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.100.81.200"}}}}
	gen, err := st.WriteObjects(&labstore.State{Services: []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{sl}})
	if err != nil {
		t.Fatal(err)
	}
	o := next(t, ch)
	for o.Generation < gen {
		o = next(t, ch)
	}
	be.mu.Lock()
	snap := be.snapshots[len(be.snapshots)-1]
	be.mu.Unlock()
	if len(snap.ServicePorts) != 1 || len(snap.ServicePorts[0].Endpoints) != 1 {
		t.Fatalf("after writing a Service and its slice (generation %d): %+v", o.Generation, snap.ServicePorts)
	}
	if gen, err = st.WriteObjects(&labstore.State{}); err != nil {
		t.Fatal(err)
	}
	for o.Generation < gen {
		o = next(t, ch)
	}
	if o.Stats.ServicePorts != 0 {
		t.Fatalf("after deleting them: %+v", o)
	}
}
