package workload

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// viewed returns st's pods as the API view shows them: Running and Ready,
// except those named in notReady (Running, Ready false) and pending
// (Pending, no conditions).
func viewed(st *labstore.State, notReady, pending map[string]bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range st.Pods {
		p = p.DeepCopy()
		switch {
		case pending[p.Name]:
			p.Status = corev1.PodStatus{Phase: corev1.PodPending}
		default:
			ready := corev1.ConditionTrue
			if notReady[p.Name] {
				ready = corev1.ConditionFalse
			}
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}
		}
		out = append(out, p)
	}
	return out
}

// TestControllerStatusFromPods: the StatefulSet and DaemonSet of the
// servicenet manifest, and a Deployment and a ReplicaSet, count their live
// pods, the ready ones (Running and Ready) and those of their current
// template; a Terminating pod is not counted.
func TestControllerStatusFromPods(t *testing.T) {
	c := seeded()
	st := applyWith(t, c, &labstore.State{}, readServicenet(t)+`
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: x}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: cache}
spec:
  replicas: 2
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec: {containers: [{name: cache, image: x}]}
`)
	podsOf := func(kind, ns, name string) []string {
		var names []string
		for _, p := range st.Pods {
			if ownedBy(p, kind, ns, name) {
				names = append(names, p.Name)
			}
		}
		return names
	}
	web, cache, agent := podsOf("Deployment", "default", "web"), podsOf("ReplicaSet", "default", "cache"), podsOf("DaemonSet", "shop", "agent")
	if len(web) != 3 || len(cache) != 2 || len(agent) != 2 {
		t.Fatalf("pods: web %v, cache %v, agent %v", web, cache, agent)
	}
	pods := viewed(st, map[string]bool{web[0]: true, "db-1": true, agent[0]: true}, map[string]bool{cache[0]: true})
	for _, p := range pods {
		if p.Name == web[1] {
			now := metav1.Now()
			p.DeletionTimestamp = &now // Terminating: not counted
		}
	}

	d := DeploymentWithStatus(st.Deployments[0], pods)
	if s := d.Status; s.Replicas != 2 || s.UpdatedReplicas != 2 || s.ReadyReplicas != 1 || s.AvailableReplicas != 1 || s.UnavailableReplicas != 2 {
		t.Errorf("Deployment web status %+v, want 2 live (one Terminating), 2 updated, 1 ready and available, 2 unavailable", s)
	}
	if st.Deployments[0].Status.Replicas != 0 {
		t.Error("DeploymentWithStatus changed the stored Deployment")
	}
	rs := ReplicaSetWithStatus(st.ReplicaSets[0], pods)
	if s := rs.Status; s.Replicas != 2 || s.ReadyReplicas != 1 || s.AvailableReplicas != 1 {
		t.Errorf("ReplicaSet cache status %+v, want 2 current, 1 ready (one Pending)", s)
	}
	ss := StatefulSetWithStatus(st.StatefulSets[0], pods)
	if s := ss.Status; s.Replicas != 2 || s.ReadyReplicas != 1 || s.CurrentReplicas != 2 || s.UpdatedReplicas != 2 {
		t.Errorf("StatefulSet db status %+v, want 2 replicas, 1 ready (db-1 not), 2 current and updated", s)
	}
	ds := c.DaemonSetWithStatus(st.DaemonSets[0], pods)
	if s := ds.Status; s.DesiredNumberScheduled != 2 || s.CurrentNumberScheduled != 2 || s.NumberReady != 1 ||
		s.UpdatedNumberScheduled != 2 || s.NumberAvailable != 1 || s.NumberUnavailable != 1 || s.NumberMisscheduled != 0 {
		t.Errorf("DaemonSet agent status %+v, want 2 desired (both nodes are linux), 2 current and updated, 1 ready", s)
	}
	// A template changed since the pods were made: none of them is up to date.
	changed := st.StatefulSets[0].DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "other"
	if s := StatefulSetWithStatus(changed, pods).Status; s.UpdatedReplicas != 0 || s.Replicas != 2 {
		t.Errorf("StatefulSet of a changed template: %+v, want 0 updated of 2", s)
	}
}
