package workload

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

type named interface {
	GetNamespace() string
	GetName() string
}

func defaultNamespace(m *metav1.ObjectMeta) {
	if m.Namespace == "" {
		m.Namespace = "default"
	}
}

func sameName[T named](meta metav1.ObjectMeta) func(T) bool {
	return func(o T) bool { return o.GetNamespace() == meta.Namespace && o.GetName() == meta.Name }
}

// checkName validates an object name as the API server would: a Service
// name is a DNS-1035 label, a Pod or Deployment name a DNS-1123 subdomain,
// every namespace a DNS-1123 label.
func checkName(where, kind string, meta metav1.ObjectMeta) error {
	if meta.Name == "" {
		return errorf(where, "%s: metadata.name: required", kind)
	}
	if errs := validation.IsDNS1123Label(meta.Namespace); len(errs) > 0 {
		return errorf(where, "%s %s/%s: metadata.namespace %q: %s", kind, meta.Namespace, meta.Name, meta.Namespace, errs[0])
	}
	check := validation.IsDNS1123Subdomain
	if kind == "Service" {
		check = validation.IsDNS1035Label
	}
	if errs := check(meta.Name); len(errs) > 0 {
		return errorf(where, "%s %s/%s: metadata.name %q: %s", kind, meta.Namespace, meta.Name, meta.Name, errs[0])
	}
	return nil
}
