package labstore

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// State is every object of a lab, as the lab's object store holds it.
type State struct {
	// Namespaces are the namespaces created by manifests; the built-in ones
	// (BuiltinNamespaces) exist in every lab without an object here.
	Namespaces     []*corev1.Namespace
	Deployments    []*appsv1.Deployment
	ReplicaSets    []*appsv1.ReplicaSet
	StatefulSets   []*appsv1.StatefulSet
	DaemonSets     []*appsv1.DaemonSet
	Pods           []*corev1.Pod
	Services       []*corev1.Service
	ConfigMaps     []*corev1.ConfigMap
	EndpointSlices []*discoveryv1.EndpointSlice
}

// Clone returns a deep copy, so that a failed apply leaves the input as it was.
func (s *State) Clone() *State {
	out := &State{}
	for _, o := range s.Namespaces {
		out.Namespaces = append(out.Namespaces, o.DeepCopy())
	}
	for _, o := range s.Deployments {
		out.Deployments = append(out.Deployments, o.DeepCopy())
	}
	for _, o := range s.ReplicaSets {
		out.ReplicaSets = append(out.ReplicaSets, o.DeepCopy())
	}
	for _, o := range s.StatefulSets {
		out.StatefulSets = append(out.StatefulSets, o.DeepCopy())
	}
	for _, o := range s.DaemonSets {
		out.DaemonSets = append(out.DaemonSets, o.DeepCopy())
	}
	for _, o := range s.Pods {
		out.Pods = append(out.Pods, o.DeepCopy())
	}
	for _, o := range s.Services {
		out.Services = append(out.Services, o.DeepCopy())
	}
	for _, o := range s.ConfigMaps {
		out.ConfigMaps = append(out.ConfigMaps, o.DeepCopy())
	}
	for _, o := range s.EndpointSlices {
		out.EndpointSlices = append(out.EndpointSlices, o.DeepCopy())
	}
	return out
}

// Pod returns the pod with that name in any namespace (pod names are unique
// across a lab because each one is a host of the lab).
func (s *State) Pod(name string) *corev1.Pod {
	for _, p := range s.Pods {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Service returns the Service namespace/name, or nil.
func (s *State) Service(namespace, name string) *corev1.Service {
	for _, svc := range s.Services {
		if svc.Namespace == namespace && svc.Name == name {
			return svc
		}
	}
	return nil
}

// ConfigMap returns the ConfigMap namespace/name, or nil.
func (s *State) ConfigMap(namespace, name string) *corev1.ConfigMap {
	for _, cm := range s.ConfigMaps {
		if cm.Namespace == namespace && cm.Name == name {
			return cm
		}
	}
	return nil
}

// BuiltinNamespaces exist in every lab, as in a new cluster.
var BuiltinNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// NamespaceExists reports whether the namespace is a built-in one or was
// created by a manifest.
func (s *State) NamespaceExists(name string) bool {
	for _, n := range BuiltinNamespaces {
		if n == name {
			return true
		}
	}
	return s.Namespace(name) != nil
}

// Namespace returns the created namespace of that name, or nil.
func (s *State) Namespace(name string) *corev1.Namespace {
	for _, ns := range s.Namespaces {
		if ns.Name == name {
			return ns
		}
	}
	return nil
}
