package workload

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/svclab/svclab/internal/labstore"
)

// A Deployment owns its pods directly here (svclab has no ReplicaSets): each
// pod is named <deployment>-<pod-template-hash>-<5 random characters> as the
// ReplicaSet controller names them, and carries the pod-template-hash label.
func (c Cluster) applyDeployment(st *labstore.State, d *appsv1.Deployment, source string) error {
	defaultNamespace(&d.ObjectMeta)
	if err := checkName(source, "Deployment", d.ObjectMeta); err != nil {
		return err
	}
	where := fmt.Sprintf("Deployment %s/%s", d.Namespace, d.Name)
	if d.Spec.Selector == nil {
		return errorf(source, "%s: spec.selector: required", where)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return errorf(source, "%s: spec.selector: %v", where, err)
	}
	if sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		return errorf(source, "%s: spec.selector: does not match spec.template.metadata.labels", where)
	}
	if d.Spec.Replicas == nil {
		one := int32(1)
		d.Spec.Replicas = &one
	}
	if *d.Spec.Replicas < 0 {
		return errorf(source, "%s: spec.replicas %d: must not be negative", where, *d.Spec.Replicas)
	}
	st.Deployments = replaceOrAdd(st.Deployments, d, sameName[*appsv1.Deployment](d.ObjectMeta))
	return c.reconcileDeployment(st, d, source)
}

// reconcileDeployment makes the pods of d match its template and replicas:
// pods of an older template are replaced, extra pods removed, missing ones made.
func (c Cluster) reconcileDeployment(st *labstore.State, d *appsv1.Deployment, source string) error {
	hash := hashOf(d.Spec.Template)
	var keep []*corev1.Pod
	var others []*corev1.Pod
	for _, p := range st.Pods {
		if PodOwnedBy(p, d.Namespace, d.Name) {
			if p.Labels["pod-template-hash"] == hash && int32(len(keep)) < *d.Spec.Replicas {
				keep = append(keep, p)
			}
			continue
		}
		others = append(others, p)
	}
	st.Pods = append(others, keep...)
	for i := int32(len(keep)); i < *d.Spec.Replicas; i++ {
		pod := &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       d.Namespace,
				Name:            uniquePodName(st, d.Name+"-"+hash+"-"),
				Labels:          map[string]string{"pod-template-hash": hash},
				Annotations:     d.Spec.Template.Annotations,
				OwnerReferences: []metav1.OwnerReference{ownerRef("Deployment", d.Name)},
			},
			Spec: *d.Spec.Template.Spec.DeepCopy(),
		}
		for k, v := range d.Spec.Template.Labels {
			pod.Labels[k] = v
		}
		if err := c.applyPod(st, pod, source); err != nil {
			return err
		}
	}
	return nil
}

func uniquePodName(st *labstore.State, prefix string) string {
	for {
		if name := prefix + randomSuffix(); st.Pod(name) == nil {
			return name
		}
	}
}
