package workload

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// applyReplicaSet validates a ReplicaSet as the API server does and makes
// its pods, named <replicaset>-<5 random characters> as the ReplicaSet
// controller names them (generateName <replicaset>-).
func (c Cluster) applyReplicaSet(st *labstore.State, rs *appsv1.ReplicaSet, source string) error {
	defaultNamespace(&rs.ObjectMeta)
	ctl := podController{kind: "ReplicaSet", meta: rs.ObjectMeta, selector: rs.Spec.Selector, template: &rs.Spec.Template, replicas: &rs.Spec.Replicas}
	if err := ctl.validate(source); err != nil {
		return err
	}
	st.ReplicaSets = replaceOrAdd(st.ReplicaSets, rs, sameName[*appsv1.ReplicaSet](rs.ObjectMeta))
	return c.reconcileReplicaSet(st, rs, source)
}

// reconcileReplicaSet makes as many live pods as replicas. Unlike a
// Deployment, a ReplicaSet does not replace pods of an older template: it
// only counts them (as upstream's controller does).
func (c Cluster) reconcileReplicaSet(st *labstore.State, rs *appsv1.ReplicaSet, source string) error {
	ensureUID("ReplicaSet", &rs.ObjectMeta)
	live, _ := ownedPods(st, "ReplicaSet", rs.ObjectMeta)
	want := int(*rs.Spec.Replicas)
	if len(live) > want {
		removePods(st, live[want:])
	}
	for i := len(live); i < want; i++ {
		name := c.uniquePodName(st, generateNameBase(rs.Name+"-"))
		if err := c.applyPod(st, newPod("ReplicaSet", rs.ObjectMeta, &rs.Spec.Template, name, nil), source); err != nil {
			return err
		}
	}
	return nil
}
