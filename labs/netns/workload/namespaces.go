package workload

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/svclab/svclab/internal/labstore"
)

// immortalNamespaces may not be deleted (the API server's namespace
// lifecycle admission refuses it); a lab also keeps kube-node-lease, which
// it has no object for.
var immortalNamespaces = labstore.BuiltinNamespaces

// applyNamespace validates a Namespace as the API server does (a cluster-
// scoped object named by a DNS-1123 label) and stores it, Active.
func applyNamespace(st *labstore.State, ns *corev1.Namespace, source string) error {
	if ns.Name == "" {
		return errorf(source, "Namespace: metadata.name: required")
	}
	errs := apivalidation.ValidateObjectMeta(&ns.ObjectMeta, false, apivalidation.ValidateNamespaceName, field.NewPath("metadata"))
	if len(errs) > 0 {
		return errorf(source, "Namespace %s: %s", ns.Name, errs[0].Error())
	}
	if old := st.Namespace(ns.Name); old != nil && old.DeletionTimestamp != nil {
		return errorf(source, "Namespace %s: %s", ns.Name, terminatingNamespace(ns.Name))
	}
	if slices.Contains(labstore.BuiltinNamespaces, ns.Name) {
		return nil // exists in every lab: unchanged, as kubectl apply of it is
	}
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if len(ns.Spec.Finalizers) == 0 {
		ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name // as the API server sets it
	st.Namespaces = replaceOrAdd(st.Namespaces, ns, func(o *corev1.Namespace) bool { return o.Name == ns.Name })
	return nil
}

// checkNamespaceExists refuses an object whose namespace does not exist, or
// is being deleted, with the API server's words: `namespaces "x" not
// found`.
func checkNamespaceExists(exists func(string) *corev1.Namespace, builtin func(string) bool, source, kind string, meta metav1.ObjectMeta) error {
	if builtin(meta.Namespace) {
		return nil
	}
	ns := exists(meta.Namespace)
	if ns == nil {
		return errorf(source, "%s %s/%s: namespaces %q not found", kind, meta.Namespace, meta.Name, meta.Namespace)
	}
	if ns.DeletionTimestamp != nil {
		return errorf(source, "%s %s/%s: %s", kind, meta.Namespace, meta.Name, terminatingNamespace(meta.Namespace))
	}
	return nil
}

func terminatingNamespace(name string) string {
	return fmt.Sprintf("namespaces %q is forbidden: unable to create new content in namespace %s because it is being terminated", name, name)
}

// checkNamespaces walks a manifest in document order, as kubectl apply
// sends it, and refuses the first object whose namespace neither exists in
// the lab nor is created by an earlier document.
func (m *Manifests) checkNamespaces(st *labstore.State, source string) error {
	created := map[string]*corev1.Namespace{}
	exists := func(name string) *corev1.Namespace {
		if ns := created[name]; ns != nil {
			return ns
		}
		return st.Namespace(name)
	}
	builtin := func(name string) bool { return slices.Contains(labstore.BuiltinNamespaces, name) }
	for _, obj := range m.order {
		if ns, ok := obj.(*corev1.Namespace); ok {
			if old := st.Namespace(ns.Name); old != nil && old.DeletionTimestamp != nil {
				continue // refused with its own error when applied
			}
			created[ns.Name] = ns
			continue
		}
		o, ok := obj.(metav1.Object)
		if !ok {
			continue
		}
		meta := metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName()}
		defaultNamespace(&meta)
		if len(validation.IsDNS1123Label(meta.Namespace)) > 0 {
			continue // an invalid name: its metadata check says so
		}
		if err := checkNamespaceExists(exists, builtin, m.where(source, obj), kindOf(obj), meta); err != nil {
			return err
		}
	}
	return nil
}

// kindOf names an object's kind for errors.
func kindOf(obj any) string {
	return fmt.Sprintf("%T", obj)[len("*v1."):]
}
