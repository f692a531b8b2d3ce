package workload

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxPodNameLen bounds pod names. The API server allows 253 characters (a
// DNS-1123 subdomain), but a pod of a lab is a host of the lab named after
// it: its network namespace svclab-<lab>.<pod>, its log and pid files. svclab
// takes at most 63 characters (the longest host name a kubelet gives a pod)
// and refuses longer names before anything is built. Deployment pods always
// fit: their names are made as the ReplicaSet controller makes them, from a
// base of at most 58 characters and a 5-character suffix.
const MaxPodNameLen = 63

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

// checkMeta validates an object's metadata as the API server does, with
// apimachinery's ValidateObjectMeta: its name (a Service name is a
// DNS-1035 label, other names DNS-1123 subdomains), its namespace (a
// DNS-1123 label, so "../x" never names a file), its labels and
// annotations. The error names source, object and field, e.g.
// `manifest m.yaml: document 2: Pod default/p: metadata.namespace: Invalid value: "../x": …`.
func checkMeta(source, kind string, meta metav1.ObjectMeta) error {
	if meta.Name == "" {
		return errorf(source, "%s: metadata.name: required", kind)
	}
	nameFn := apivalidation.NameIsDNSSubdomain
	if kind == "Service" {
		nameFn = apivalidation.NameIsDNS1035Label
	}
	errs := apivalidation.ValidateObjectMeta(&meta, true, nameFn, field.NewPath("metadata"))
	if kind == "Pod" && len(meta.Name) > MaxPodNameLen {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), "", MaxPodNameLen))
		errs[len(errs)-1].Detail += fmt.Sprintf(" (%d characters; a pod is a host of the lab: the API server allows 253, a lab host name at most %d)", len(meta.Name), MaxPodNameLen)
	}
	return fieldErrors(source, kind, meta, errs)
}

// fieldErrors turns the first of errs (if any) into one error naming
// source and object.
func fieldErrors(source, kind string, meta metav1.ObjectMeta, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return errorf(source, "%s %s/%s: %s", kind, meta.Namespace, meta.Name, errs[0].Error())
}
