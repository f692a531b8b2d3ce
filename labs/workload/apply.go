package workload

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/svclab/svclab/internal/labstore"
)

// Apply returns the state after applying m to cur, like `kubectl apply`: an
// object is created, or replaced when it exists. Deployments become pods,
// Services get their cluster IP and node ports, and the EndpointSlices of
// every Service are recomputed. cur is not modified; on error nothing of m
// is applied. source names the manifest in errors.
func (c Cluster) Apply(cur *labstore.State, m *Manifests, source string) (*labstore.State, error) {
	c.leaving = cur.Pods
	next := cur.Clone()
	for _, cm := range m.ConfigMaps {
		if err := applyConfigMap(next, cm.DeepCopy(), m.where(source, cm)); err != nil {
			return nil, err
		}
	}
	for _, pod := range m.Pods {
		if err := c.applyPod(next, pod.DeepCopy(), m.where(source, pod)); err != nil {
			return nil, err
		}
	}
	for _, d := range m.Deployments {
		if err := c.applyDeployment(next, d.DeepCopy(), m.where(source, d)); err != nil {
			return nil, err
		}
	}
	for _, svc := range m.Services {
		if err := c.applyService(next, svc.DeepCopy(), m.where(source, svc)); err != nil {
			return nil, err
		}
	}
	next.EndpointSlices = EndpointSlicesFor(next.Services, next.Pods)
	return next, nil
}

// DeletePods removes the named pods. Pods owned by a Deployment are
// recreated, as the ReplicaSet controller would, with new names and IPs.
func (c Cluster) DeletePods(cur *labstore.State, names []string) (*labstore.State, error) {
	c.leaving = cur.Pods
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

// applyConfigMap validates a ConfigMap as the API server does (its
// metadata, its keys, at most 1 MiB of data in all) and stores it.
func applyConfigMap(st *labstore.State, cm *corev1.ConfigMap, source string) error {
	defaultNamespace(&cm.ObjectMeta)
	if err := checkMeta(source, "ConfigMap", cm.ObjectMeta); err != nil {
		return err
	}
	var errs field.ErrorList
	size := 0
	for key, value := range cm.Data {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, msg))
		}
		size += len(value)
	}
	for key, value := range cm.BinaryData {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(key), key, msg))
		}
		if _, dup := cm.Data[key]; dup {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(key), key, "duplicate of key present in data"))
		}
		size += len(value)
	}
	if size > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath("data"), "", corev1.MaxSecretSize))
	}
	if err := fieldErrors(source, "ConfigMap", cm.ObjectMeta, errs); err != nil {
		return err
	}
	st.ConfigMaps = replaceOrAdd(st.ConfigMaps, cm, sameName[*corev1.ConfigMap](cm.ObjectMeta))
	return nil
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
