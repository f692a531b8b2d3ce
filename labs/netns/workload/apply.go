package workload

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/svclab/svclab/internal/labstore"
)

// Apply returns the state after applying m to cur, like `kubectl apply`: an
// object is created, or replaced when it exists. Controllers (Deployment,
// ReplicaSet, StatefulSet, DaemonSet) make their pods, Services get their
// cluster IP and node ports, and the EndpointSlices of every Service with a
// selector are recomputed (hand-written slices are kept as they are). An
// object in a namespace that neither exists nor is created by an earlier
// document of m is refused (`namespaces "x" not found`). cur is not
// modified; on error nothing of m is applied. source names the manifest in
// errors.
func (c Cluster) Apply(cur *labstore.State, m *Manifests, source string) (*labstore.State, error) {
	if err := m.checkNamespaces(cur, source); err != nil {
		return nil, err
	}
	c.leaving = cur.Pods
	next := cur.Clone()
	for _, ns := range m.Namespaces {
		if err := applyNamespace(next, ns.DeepCopy(), m.where(source, ns)); err != nil {
			return nil, err
		}
	}
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
	for _, rs := range m.ReplicaSets {
		if err := c.applyReplicaSet(next, rs.DeepCopy(), m.where(source, rs)); err != nil {
			return nil, err
		}
	}
	for _, ss := range m.StatefulSets {
		if err := c.applyStatefulSet(next, ss.DeepCopy(), m.where(source, ss)); err != nil {
			return nil, err
		}
	}
	for _, ds := range m.DaemonSets {
		if err := c.applyDaemonSet(next, ds.DeepCopy(), m.where(source, ds)); err != nil {
			return nil, err
		}
	}
	for _, svc := range m.Services {
		if err := c.applyService(next, svc.DeepCopy(), m.where(source, svc)); err != nil {
			return nil, err
		}
	}
	for _, s := range m.EndpointSlices {
		if err := applyEndpointSlice(next, s.DeepCopy(), m.where(source, s)); err != nil {
			return nil, err
		}
	}
	// The other controllers too: a pod gone since the last change may be
	// made again now (a StatefulSet's pod of the same name).
	if err := c.reconcileAll(next, source); err != nil {
		return nil, err
	}
	return next, nil
}

// endpointSlices are the hand-written slices of st and those the
// EndpointSlice controller writes for its Services.
func endpointSlices(st *labstore.State) []*discoveryv1.EndpointSlice {
	return append(handWritten(st.EndpointSlices), EndpointSlicesFor(st.Services, st.Pods)...)
}

// reconcileAll runs every controller of st once (after pods were deleted or
// finished terminating).
func (c Cluster) reconcileAll(st *labstore.State, source string) error {
	for _, d := range st.Deployments {
		if err := c.reconcileDeployment(st, d, source); err != nil {
			return err
		}
	}
	for _, rs := range st.ReplicaSets {
		if err := c.reconcileReplicaSet(st, rs, source); err != nil {
			return err
		}
	}
	for _, ss := range st.StatefulSets {
		if err := c.reconcileStatefulSet(st, ss, source); err != nil {
			return err
		}
	}
	for _, ds := range st.DaemonSets {
		if err := c.reconcileDaemonSet(st, ds, source); err != nil {
			return err
		}
	}
	dropFinishedNamespaces(st)
	st.EndpointSlices = endpointSlices(st)
	return nil
}

// dropFinishedNamespaces removes the Terminating namespaces without pods
// (a Terminating namespace goes once its last pod is gone).
func dropFinishedNamespaces(st *labstore.State) {
	st.Namespaces = slices.DeleteFunc(st.Namespaces, func(ns *corev1.Namespace) bool {
		return ns.DeletionTimestamp != nil && !slices.ContainsFunc(st.Pods, func(p *corev1.Pod) bool { return p.Namespace == ns.Name })
	})
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
