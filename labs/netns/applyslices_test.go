package netns

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/labstore"
)

func slice(name, addr string, labels map[string]string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{addr}}}}
}

// TestSliceDelta: a change of hand-written slices is a delta of the changed
// and new ones (undo: the old ones back, the new ones removed); a change
// of anything else, or of a controller's slice, is not one.
func TestSliceDelta(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0"}}
	old := slice("a-1", "10.244.1.5", nil)
	cur := &labstore.State{Pods: []*corev1.Pod{pod}, EndpointSlices: []*discoveryv1.EndpointSlice{old}}

	changed, added := slice("a-1", "10.244.1.6", nil), slice("b-1", "10.244.1.7", nil)
	next := &labstore.State{Pods: []*corev1.Pod{pod.DeepCopy()}, EndpointSlices: []*discoveryv1.EndpointSlice{changed, added}}
	delta, undo, ok := sliceDelta(cur, next)
	if !ok {
		t.Fatal("a change of two hand-written slices: not a delta")
	}
	if w := delta.Write.EndpointSlices; len(w) != 2 || w[0] != changed || w[1] != added || delta.Remove != nil {
		t.Errorf("delta writes %v, removes %v; want a-1 and b-1 written", w, delta.Remove)
	}
	if w, r := undo.Write.EndpointSlices, undo.Remove.EndpointSlices; len(w) != 1 || w[0] != old || len(r) != 1 || r[0] != added {
		t.Errorf("undo writes %v, removes %v; want the old a-1 back and b-1 removed", w, r)
	}

	same := &labstore.State{Pods: []*corev1.Pod{pod}, EndpointSlices: []*discoveryv1.EndpointSlice{old.DeepCopy()}}
	if delta, _, ok := sliceDelta(cur, same); !ok || !delta.Empty() {
		t.Errorf("an unchanged slice: delta %+v, ok %v; want an empty delta", delta, ok)
	}

	for name, next := range map[string]*labstore.State{
		"a pod changed": {Pods: []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}}},
			EndpointSlices: []*discoveryv1.EndpointSlice{changed}},
		"a controller's slice": {Pods: []*corev1.Pod{pod}, EndpointSlices: []*discoveryv1.EndpointSlice{changed,
			slice("web-abc", "10.244.1.5", map[string]string{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"})}},
		"a slice gone": {Pods: []*corev1.Pod{pod}},
	} {
		if _, _, ok := sliceDelta(cur, next); ok {
			t.Errorf("%s: taken for a change of slices", name)
		}
	}
}
