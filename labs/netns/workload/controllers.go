package workload

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/svclab/svclab/internal/labstore"
)

// podController is what the workload controllers (Deployment, ReplicaSet,
// StatefulSet, DaemonSet) share: a selector and a pod template.
type podController struct {
	kind     string
	meta     metav1.ObjectMeta
	selector *metav1.LabelSelector
	template *corev1.PodTemplateSpec
	replicas **int32 // nil for a DaemonSet
}

// validate checks a controller as the API server's apps validation does:
// its metadata; a selector that is required, valid, not empty and matches
// the template's labels (`selector` does not match template `labels`);
// valid template labels and annotations; restartPolicy Always; replicas
// defaulted to 1 and not negative.
func (c podController) validate(source string) error {
	if err := checkMeta(source, c.kind, c.meta); err != nil {
		return err
	}
	var errs field.ErrorList
	spec := field.NewPath("spec")
	tmplLabels := spec.Child("template", "metadata", "labels")
	errs = append(errs, metav1validation.ValidateLabels(c.template.Labels, tmplLabels)...)
	errs = append(errs, apivalidation.ValidateAnnotations(c.template.Annotations, spec.Child("template", "metadata", "annotations"))...)
	if c.selector == nil {
		errs = append(errs, field.Required(spec.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(c.selector, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
		if len(c.selector.MatchLabels)+len(c.selector.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(spec.Child("selector"), c.selector, "empty selector is invalid for "+lower(c.kind)))
		}
	}
	if len(errs) == 0 {
		sel, err := metav1.LabelSelectorAsSelector(c.selector)
		if err != nil {
			errs = append(errs, field.Invalid(spec.Child("selector"), c.selector, err.Error()))
		} else if !sel.Matches(labels.Set(c.template.Labels)) {
			errs = append(errs, field.Invalid(tmplLabels, c.template.Labels, "`selector` does not match template `labels`"))
		}
	}
	switch c.template.Spec.RestartPolicy {
	case "":
		c.template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	case corev1.RestartPolicyAlways:
	default:
		errs = append(errs, field.NotSupported(spec.Child("template", "spec", "restartPolicy"), c.template.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if len(c.template.Spec.Containers) == 0 {
		errs = append(errs, field.Required(spec.Child("template", "spec", "containers"), ""))
	}
	if c.replicas != nil {
		if *c.replicas == nil {
			one := int32(1)
			*c.replicas = &one
		}
		if n := **c.replicas; n < 0 {
			errs = append(errs, field.Invalid(spec.Child("replicas"), n, "must be greater than or equal to 0"))
		}
	}
	return fieldErrors(source, c.kind, c.meta, errs)
}

func lower(kind string) string {
	switch kind {
	case "Deployment":
		return "deployment"
	case "ReplicaSet":
		return "replicaset"
	case "StatefulSet":
		return "statefulset"
	}
	return "daemonset"
}

// newPod is a pod of a controller's template: the template's labels and
// annotations (plus extra labels), an owner reference to the controller.
func newPod(kind string, owner metav1.ObjectMeta, tmpl *corev1.PodTemplateSpec, name string, extra map[string]string) *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       owner.Namespace,
			Name:            name,
			Labels:          map[string]string{},
			Annotations:     tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{ownerRef(kind, owner)},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	for k, v := range tmpl.Labels {
		pod.Labels[k] = v
	}
	for k, v := range extra {
		pod.Labels[k] = v
	}
	return pod
}

// ownedPods are the pods kind namespace/name controls, the terminating
// ones apart (a controller counts only live pods, and makes a replacement
// as soon as one is being deleted).
func ownedPods(st *labstore.State, kind string, meta metav1.ObjectMeta) (live, terminating []*corev1.Pod) {
	for _, p := range st.Pods {
		if !ownedBy(p, kind, meta.Namespace, meta.Name) {
			continue
		}
		if p.DeletionTimestamp != nil {
			terminating = append(terminating, p)
		} else {
			live = append(live, p)
		}
	}
	return live, terminating
}

// ownedBy reports whether pod is controlled by kind namespace/name.
func ownedBy(pod *corev1.Pod, kind, namespace, name string) bool {
	if pod.Namespace != namespace {
		return false
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == kind && ref.Name == name {
			return true
		}
	}
	return false
}

// removePods drops pods from the state (those a controller no longer wants).
func removePods(st *labstore.State, gone []*corev1.Pod) {
	drop := map[*corev1.Pod]bool{}
	for _, p := range gone {
		drop[p] = true
	}
	kept := st.Pods[:0]
	for _, p := range st.Pods {
		if !drop[p] {
			kept = append(kept, p)
		}
	}
	st.Pods = kept
}

// ensureUID gives an object the UID the API server would have given it.
func ensureUID(kind string, meta *metav1.ObjectMeta) {
	if meta.UID == "" {
		meta.UID = objectUID(kind, *meta)
	}
}

func whereOf(kind string, meta metav1.ObjectMeta) string {
	return fmt.Sprintf("%s %s/%s", kind, meta.Namespace, meta.Name)
}
