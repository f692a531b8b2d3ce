package workload

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// Apply returns the state after applying m to cur, like `kubectl apply`: an
// object is created, or replaced when it exists. Deployments become pods,
// Services get their cluster IP and node ports, and the EndpointSlices of
// every Service are recomputed. cur is not modified; on error nothing of m
// is applied. source names the manifest in errors.
func (c Cluster) Apply(cur *labstore.State, m *Manifests, source string) (*labstore.State, error) {
	next := cur.Clone()
	for _, cm := range m.ConfigMaps {
		cm = cm.DeepCopy()
		defaultNamespace(&cm.ObjectMeta)
		next.ConfigMaps = replaceOrAdd(next.ConfigMaps, cm, sameName[*corev1.ConfigMap](cm.ObjectMeta))
	}
	for _, pod := range m.Pods {
		if err := c.applyPod(next, pod.DeepCopy(), source); err != nil {
			return nil, err
		}
	}
	for _, d := range m.Deployments {
		if err := c.applyDeployment(next, d.DeepCopy(), source); err != nil {
			return nil, err
		}
	}
	for _, svc := range m.Services {
		if err := c.applyService(next, svc.DeepCopy(), source); err != nil {
			return nil, err
		}
	}
	next.EndpointSlices = EndpointSlicesFor(next.Services, next.Pods)
	return next, nil
}

// DeletePods removes the named pods. Pods owned by a Deployment are
// recreated, as the ReplicaSet controller would, with new names and IPs.
func (c Cluster) DeletePods(cur *labstore.State, names []string) (*labstore.State, error) {
	next := cur.Clone()
	for _, name := range names {
		if next.Pod(name) == nil {
			return nil, fmt.Errorf("pod %q: not found", name)
		}
		next.Pods = slices.DeleteFunc(next.Pods, func(p *corev1.Pod) bool { return p.Name == name })
	}
	for _, d := range next.Deployments {
		if err := c.reconcileDeployment(next, d, "delete"); err != nil {
			return nil, err
		}
	}
	next.EndpointSlices = EndpointSlicesFor(next.Services, next.Pods)
	return next, nil
}

func replaceOrAdd[T any](list []T, obj T, same func(T) bool) []T {
	for i, o := range list {
		if same(o) {
			list[i] = obj
			return list
		}
	}
	return append(list, obj)
}
