package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// A Deployment owns its pods directly here (svclab keeps no ReplicaSet
// object for it): each pod is named <deployment>-<pod-template-hash>-<5
// random characters> as the ReplicaSet controller names the pods of the
// Deployment's ReplicaSet <deployment>-<pod-template-hash>, and carries the
// pod-template-hash label.
func (c Cluster) applyDeployment(st *labstore.State, d *appsv1.Deployment, source string) error {
	defaultNamespace(&d.ObjectMeta)
	ctl := podController{kind: "Deployment", meta: d.ObjectMeta, selector: d.Spec.Selector, template: &d.Spec.Template, replicas: &d.Spec.Replicas}
	if err := ctl.validate(source); err != nil {
		return err
	}
	st.Deployments = replaceOrAdd(st.Deployments, d, sameName[*appsv1.Deployment](d.ObjectMeta))
	return c.reconcileDeployment(st, d, source)
}

// reconcileDeployment makes the pods of d match its template and replicas:
// pods of an older template are replaced, extra pods removed, missing ones
// made. Terminating pods do not count: their replacements are made at once.
func (c Cluster) reconcileDeployment(st *labstore.State, d *appsv1.Deployment, source string) error {
	ensureUID("Deployment", &d.ObjectMeta)
	hash := hashOf(d.Spec.Template)
	live, _ := ownedPods(st, "Deployment", d.ObjectMeta)
	var keep, drop []*corev1.Pod
	for _, p := range live {
		if p.Labels["pod-template-hash"] == hash && int32(len(keep)) < *d.Spec.Replicas {
			keep = append(keep, p)
		} else {
			drop = append(drop, p)
		}
	}
	removePods(st, drop)
	for i := int32(len(keep)); i < *d.Spec.Replicas; i++ {
		name := c.uniquePodName(st, generateNameBase(d.Name+"-"+hash+"-"))
		pod := newPod("Deployment", d.ObjectMeta, &d.Spec.Template, name, map[string]string{"pod-template-hash": hash})
		if err := c.applyPod(st, pod, source); err != nil {
			return err
		}
	}
	return nil
}

// maxGeneratedNameBase is how much of a generateName the API server keeps
// (k8s.io/apiserver/pkg/storage/names: 63 less the 5 random characters).
const maxGeneratedNameBase = MaxPodNameLen - 5

// generateNameBase cuts a generateName as the API server's name generator
// does, so that a Deployment of a 253-character name still gets pods of at
// most 63 characters.
func generateNameBase(base string) string {
	if len(base) > maxGeneratedNameBase {
		return base[:maxGeneratedNameBase]
	}
	return base
}

func (c Cluster) uniquePodName(st *labstore.State, prefix string) string {
	for {
		if name := prefix + c.randomSuffix(); st.Pod(name) == nil {
			return name
		}
	}
}
