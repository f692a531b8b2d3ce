package labstore

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// State is every object of a lab, as the lab's object store holds it.
type State struct {
	Deployments    []*appsv1.Deployment
	Pods           []*corev1.Pod
	Services       []*corev1.Service
	ConfigMaps     []*corev1.ConfigMap
	EndpointSlices []*discoveryv1.EndpointSlice
}

// Clone returns a deep copy, so that a failed apply leaves the input as it was.
func (s *State) Clone() *State {
	out := &State{}
	for _, o := range s.Deployments {
		out.Deployments = append(out.Deployments, o.DeepCopy())
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
