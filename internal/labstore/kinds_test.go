package labstore

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServiceNetworkingKindsRoundTrip: Namespaces (cluster-scoped), the
// apps/v1 controllers and a terminating pod's deadline survive the store.
func TestServiceNetworkingKindsRoundTrip(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("kinds")
	deadline := metav1.NewTime(time.Unix(2000, 0))
	meta := metav1.ObjectMeta{Namespace: "shop", Name: "db"}
	in := &State{
		Namespaces:   []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}},
		ReplicaSets:  []*appsv1.ReplicaSet{{ObjectMeta: meta}},
		StatefulSets: []*appsv1.StatefulSet{{ObjectMeta: meta}},
		DaemonSets:   []*appsv1.DaemonSet{{ObjectMeta: meta}},
		Pods:         []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db-0", DeletionTimestamp: &deadline}}},
	}
	if _, err := s.WriteObjects(in); err != nil {
		t.Fatal(err)
	}
	st, _, err := s.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Namespaces) != 1 || st.Namespaces[0].Kind != "Namespace" || !st.NamespaceExists("shop") || !st.NamespaceExists("kube-public") || st.NamespaceExists("nope") {
		t.Errorf("namespaces read back as %+v", st.Namespaces)
	}
	if len(st.ReplicaSets) != 1 || len(st.StatefulSets) != 1 || len(st.DaemonSets) != 1 || st.StatefulSets[0].Kind != "StatefulSet" {
		t.Errorf("controllers read back as %d, %d, %d", len(st.ReplicaSets), len(st.StatefulSets), len(st.DaemonSets))
	}
	if got, ok := s.PodDeletionDeadline("shop", "db-0"); !ok || !got.Equal(deadline.Time) {
		t.Errorf("PodDeletionDeadline = %v, %v; want %v", got, ok, deadline.Time)
	}
	if _, ok := s.PodDeletionDeadline("shop", "nope"); ok {
		t.Errorf("a pod that is not stored has a deadline")
	}
	clone := st.Clone()
	clone.Namespaces[0].Name = "x"
	if st.Namespaces[0].Name != "shop" {
		t.Errorf("Clone shares namespaces")
	}
}
