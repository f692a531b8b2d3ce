package workload

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/svclab/svclab/internal/labstore"
)

// A Deployment owns its pods directly here (svclab has no ReplicaSets): each
// pod is named <deployment>-<pod-template-hash>-<5 random characters> as the
// ReplicaSet controller names them, and carries the pod-template-hash label.
func (c Cluster) applyDeployment(st *labstore.State, d *appsv1.Deployment, source string) error {
	defaultNamespace(&d.ObjectMeta)
	if err := checkMeta(source, "Deployment", d.ObjectMeta); err != nil {
		return err
	}
	where := fmt.Sprintf("Deployment %s/%s", d.Namespace, d.Name)
	if d.Spec.Selector == nil {
		return errorf(source, "%s: spec.selector: required", where)
	}
	errs := metav1validation.ValidateLabels(d.Spec.Template.Labels, field.NewPath("spec", "template", "metadata", "labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(d.Spec.Template.Annotations, field.NewPath("spec", "template", "metadata", "annotations"))...)
	if err := fieldErrors(source, "Deployment", d.ObjectMeta, errs); err != nil {
		return err
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
	if d.UID == "" {
		d.UID = objectUID("Deployment", d.ObjectMeta) // the API server gives every object one
	}
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
				Name:            uniquePodName(st, generateNameBase(d.Name+"-"+hash+"-")),
				Labels:          map[string]string{"pod-template-hash": hash},
				Annotations:     d.Spec.Template.Annotations,
				OwnerReferences: []metav1.OwnerReference{ownerRef("Deployment", d.ObjectMeta)},
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

func uniquePodName(st *labstore.State, prefix string) string {
	for {
		if name := prefix + randomSuffix(); st.Pod(name) == nil {
			return name
		}
	}
}
