package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The status the apps controllers write (status.replicas, readyReplicas …),
// computed from the lab's pods as the API view shows them: a pod is ready
// when it is Running with its Ready condition true (what the supervisor
// reports), available when ready (svclab's controllers take no
// minReadySeconds), and counted only while live (not Terminating), as the
// controllers count.

// runningReady reports whether pod is Running and Ready.
func runningReady(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && podReady(pod)
}

// livePodsOf are the pods of pods that kind namespace/name controls and
// that are not Terminating.
func livePodsOf(pods []*corev1.Pod, kind, namespace, name string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && ownedBy(p, kind, namespace, name) {
			out = append(out, p)
		}
	}
	return out
}

// counts are a controller's live pods, those of its current template, and
// the ready ones (all of them, and those of the current template).
type counts struct{ live, updated, ready, updatedReady int32 }

func countPods(pods []*corev1.Pod, current func(*corev1.Pod) bool) counts {
	var c counts
	for _, p := range pods {
		c.live++
		up := current(p)
		if up {
			c.updated++
		}
		if runningReady(p) {
			c.ready++
			if up {
				c.updatedReady++
			}
		}
	}
	return c
}

// DeploymentWithStatus returns a copy of d with the status the Deployment
// controller would write from pods.
func DeploymentWithStatus(d *appsv1.Deployment, pods []*corev1.Pod) *appsv1.Deployment {
	out := d.DeepCopy()
	hash := hashOf(d.Spec.Template)
	c := countPods(livePodsOf(pods, "Deployment", d.Namespace, d.Name), func(p *corev1.Pod) bool { return p.Labels["pod-template-hash"] == hash })
	out.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: c.live, UpdatedReplicas: c.updated,
		ReadyReplicas: c.ready, AvailableReplicas: c.ready, UnavailableReplicas: max(replicas(d.Spec.Replicas)-c.ready, 0),
	}
	return out
}

// ReplicaSetWithStatus returns a copy of rs with the status the ReplicaSet
// controller would write from pods.
func ReplicaSetWithStatus(rs *appsv1.ReplicaSet, pods []*corev1.Pod) *appsv1.ReplicaSet {
	out := rs.DeepCopy()
	c := countPods(livePodsOf(pods, "ReplicaSet", rs.Namespace, rs.Name), func(*corev1.Pod) bool { return true })
	out.Status = appsv1.ReplicaSetStatus{
		ObservedGeneration: rs.Generation, Replicas: c.live, FullyLabeledReplicas: c.live, ReadyReplicas: c.ready, AvailableReplicas: c.ready,
	}
	return out
}

// StatefulSetWithStatus returns a copy of ss with the status the
// StatefulSet controller would write from pods.
func StatefulSetWithStatus(ss *appsv1.StatefulSet, pods []*corev1.Pod) *appsv1.StatefulSet {
	out := ss.DeepCopy()
	revision := ss.Name + "-" + hashOf(ss.Spec.Template)
	c := countPods(livePodsOf(pods, "StatefulSet", ss.Namespace, ss.Name), func(p *corev1.Pod) bool { return p.Labels[revisionLabel] == revision })
	out.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: ss.Generation, Replicas: c.live, ReadyReplicas: c.ready, AvailableReplicas: c.ready,
		CurrentReplicas: c.updated, UpdatedReplicas: c.updated,
	}
	return out
}

// DaemonSetWithStatus returns a copy of ds with the status the DaemonSet
// controller would write from pods: desired is every node of the cluster
// whose labels match the template's nodeSelector.
func (c Cluster) DaemonSetWithStatus(ds *appsv1.DaemonSet, pods []*corev1.Pod) *appsv1.DaemonSet {
	out := ds.DeepCopy()
	sel := labels.SelectorFromSet(ds.Spec.Template.Spec.NodeSelector)
	eligible := map[string]bool{}
	for _, n := range c.Nodes {
		if sel.Matches(n.Labels()) {
			eligible[n.Name] = true
		}
	}
	revision := hashOf(ds.Spec.Template)
	var scheduled, misscheduled []*corev1.Pod
	for _, p := range livePodsOf(pods, "DaemonSet", ds.Namespace, ds.Name) {
		if eligible[p.Spec.NodeName] {
			scheduled = append(scheduled, p)
		} else {
			misscheduled = append(misscheduled, p)
		}
	}
	n := countPods(scheduled, func(p *corev1.Pod) bool { return p.Labels[revisionLabel] == revision })
	desired := int32(len(eligible))
	out.Status = appsv1.DaemonSetStatus{
		ObservedGeneration: ds.Generation, DesiredNumberScheduled: desired, CurrentNumberScheduled: n.live,
		NumberMisscheduled: int32(len(misscheduled)), NumberReady: n.ready, UpdatedNumberScheduled: n.updated,
		NumberAvailable: n.ready, NumberUnavailable: max(desired-n.ready, 0),
	}
	return out
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
