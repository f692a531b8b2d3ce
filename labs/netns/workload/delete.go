package workload

import (
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// DefaultGracePeriod is a pod's terminationGracePeriodSeconds when its spec
// gives none (the API server's default).
const DefaultGracePeriod = 30

// DeleteOptions are kubectl delete's flags that change what is stored.
type DeleteOptions struct {
	// GracePeriod is --grace-period: seconds a deleted pod has to stop; a
	// negative value means each pod's terminationGracePeriodSeconds, 0
	// means 1 (kubectl allows 0 only with --force).
	GracePeriod int64
	// IgnoreNotFound is --ignore-not-found: an object that does not exist
	// is no error.
	IgnoreNotFound bool
	// Now is the time of the deletion (deletionTimestamp is Now plus the
	// grace period, as the API server sets it).
	Now time.Time
}

// DeletePods deletes pods by name as the API server does: each one is
// marked terminating (deletionTimestamp, deletionGracePeriodSeconds) and
// stays, its endpoint shown terminating, until Reap is told its server
// has stopped. Controllers replace their pods at once (a StatefulSet once
// the old pod is gone, since the name is the same).
func (c Cluster) DeletePods(cur *labstore.State, names []string, opts DeleteOptions) (*labstore.State, error) {
	c.leaving = cur.Pods
	next := cur.Clone()
	for _, name := range names {
		pod := next.Pod(name)
		if pod == nil {
			return nil, fmt.Errorf("pod %q: not found", name)
		}
		terminate(pod, opts)
	}
	if err := c.reconcileAll(next, "delete"); err != nil {
		return nil, err
	}
	return next, nil
}

// Delete deletes the objects a manifest names, like `kubectl delete -f`
// with the default background cascade: controllers and Services go at
// once, their pods become terminating; a Namespace becomes Terminating
// with everything in it and goes once its last pod is gone. An object that
// does not exist is an error (`services "web" not found`) unless
// opts.IgnoreNotFound; the built-in namespaces cannot be deleted. cur is
// not modified; on error nothing is deleted.
func (c Cluster) Delete(cur *labstore.State, m *Manifests, source string, opts DeleteOptions) (*labstore.State, error) {
	c.leaving = cur.Pods
	next := cur.Clone()
	for _, obj := range m.order {
		where := m.where(source, obj)
		o := obj.(metav1.Object)
		ns, name := o.GetNamespace(), o.GetName()
		if _, cluster := obj.(*corev1.Namespace); !cluster && ns == "" {
			ns = "default"
		}
		found, err := deleteObject(next, obj, ns, name, opts)
		if err != nil {
			return nil, errorf(where, "%s %s: %v", kindOf(obj), qualified(ns, name), err)
		}
		if ns := next.Namespace(ns); !found && ns != nil && ns.DeletionTimestamp != nil {
			continue // deleted with its namespace (an earlier document), as the API server still had it
		}
		if !found && !opts.IgnoreNotFound {
			return nil, errorf(where, "%s %s: %s %q not found", kindOf(obj), qualified(ns, name), resourceOf(obj), name)
		}
	}
	if err := c.reconcileAll(next, source); err != nil {
		return nil, err
	}
	return next, nil
}

// deleteObject removes one object from st (pods: marks them terminating)
// and reports whether it existed.
func deleteObject(st *labstore.State, obj any, ns, name string, opts DeleteOptions) (bool, error) {
	meta := metav1.ObjectMeta{Namespace: ns, Name: name}
	switch obj.(type) {
	case *corev1.Namespace:
		return deleteNamespace(st, name, opts)
	case *corev1.Pod:
		pod := st.Pod(name)
		if pod == nil || pod.Namespace != ns {
			return false, nil
		}
		terminate(pod, opts)
		return true, nil
	case *corev1.Service:
		return drop(&st.Services, meta), nil
	case *corev1.ConfigMap:
		return drop(&st.ConfigMaps, meta), nil
	case *discoveryv1.EndpointSlice:
		return drop(&st.EndpointSlices, meta), nil
	case *appsv1.Deployment:
		return dropController(st, &st.Deployments, "Deployment", meta, opts), nil
	case *appsv1.ReplicaSet:
		return dropController(st, &st.ReplicaSets, "ReplicaSet", meta, opts), nil
	case *appsv1.StatefulSet:
		return dropController(st, &st.StatefulSets, "StatefulSet", meta, opts), nil
	case *appsv1.DaemonSet:
		return dropController(st, &st.DaemonSets, "DaemonSet", meta, opts), nil
	}
	return false, fmt.Errorf("%T: cannot be deleted", obj)
}

// deleteNamespace marks a namespace Terminating and deletes what is in it.
func deleteNamespace(st *labstore.State, name string, opts DeleteOptions) (bool, error) {
	if slices.Contains(immortalNamespaces, name) {
		return true, fmt.Errorf("namespaces %q is forbidden: this namespace may not be deleted", name)
	}
	ns := st.Namespace(name)
	if ns == nil {
		return false, nil
	}
	if ns.DeletionTimestamp == nil {
		now := metav1.NewTime(opts.Now)
		ns.DeletionTimestamp = &now
		ns.Status.Phase = corev1.NamespaceTerminating
	}
	in := func(namespace string) bool { return namespace == name }
	st.Deployments = slices.DeleteFunc(st.Deployments, func(o *appsv1.Deployment) bool { return in(o.Namespace) })
	st.ReplicaSets = slices.DeleteFunc(st.ReplicaSets, func(o *appsv1.ReplicaSet) bool { return in(o.Namespace) })
	st.StatefulSets = slices.DeleteFunc(st.StatefulSets, func(o *appsv1.StatefulSet) bool { return in(o.Namespace) })
	st.DaemonSets = slices.DeleteFunc(st.DaemonSets, func(o *appsv1.DaemonSet) bool { return in(o.Namespace) })
	st.Services = slices.DeleteFunc(st.Services, func(o *corev1.Service) bool { return in(o.Namespace) })
	st.ConfigMaps = slices.DeleteFunc(st.ConfigMaps, func(o *corev1.ConfigMap) bool { return in(o.Namespace) })
	st.EndpointSlices = slices.DeleteFunc(st.EndpointSlices, func(o *discoveryv1.EndpointSlice) bool { return in(o.Namespace) })
	for _, p := range st.Pods {
		if in(p.Namespace) {
			terminate(p, opts)
		}
	}
	return true, nil
}

func drop[T named](list *[]T, meta metav1.ObjectMeta) bool {
	n := len(*list)
	*list = slices.DeleteFunc(*list, sameName[T](meta))
	return len(*list) < n
}

// dropController removes a controller; its pods become terminating (the
// garbage collector deletes them with their grace period).
func dropController[T named](st *labstore.State, list *[]T, kind string, meta metav1.ObjectMeta, opts DeleteOptions) bool {
	if !drop(list, meta) {
		return false
	}
	for _, p := range st.Pods {
		if ownedBy(p, kind, meta.Namespace, meta.Name) {
			terminate(p, opts)
		}
	}
	return true
}

// terminate marks a pod deleted as the API server does for a graceful
// delete: deletionGracePeriodSeconds is the grace period and
// deletionTimestamp the time by which the pod is to be gone. A pod already
// terminating keeps its deadline unless the new one is sooner.
func terminate(pod *corev1.Pod, opts DeleteOptions) {
	grace := GracePeriod(pod, opts.GracePeriod)
	deadline := metav1.NewTime(opts.Now.Add(time.Duration(grace) * time.Second).Truncate(time.Second))
	if pod.DeletionTimestamp != nil && !deadline.Before(pod.DeletionTimestamp) {
		return
	}
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &deadline, &grace
}

// GracePeriod is the grace period a pod is deleted with: override when not
// negative (0 counts as 1, as kubectl sends it without --force), else the
// pod's terminationGracePeriodSeconds, else DefaultGracePeriod.
func GracePeriod(pod *corev1.Pod, override int64) int64 {
	switch {
	case override == 0:
		return 1
	case override > 0:
		return override
	case pod.Spec.TerminationGracePeriodSeconds != nil && *pod.Spec.TerminationGracePeriodSeconds >= 0:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return DefaultGracePeriod
}

// Terminating are the pods of st being deleted.
func Terminating(st *labstore.State) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range st.Pods {
		if p.DeletionTimestamp != nil {
			out = append(out, p)
		}
	}
	return out
}

// Reap removes the terminating pods whose servers have stopped (finished),
// as the kubelet's final delete does, and the Terminating namespaces left
// without pods. It runs no controller: a StatefulSet's successor of the
// same name is made by the next change (Reconcile, or any other), after
// the old pod's host is gone. cur is not modified.
func Reap(cur *labstore.State, finished []string) *labstore.State {
	next := cur.Clone()
	next.Pods = slices.DeleteFunc(next.Pods, func(p *corev1.Pod) bool {
		return p.DeletionTimestamp != nil && slices.Contains(finished, p.Name)
	})
	dropFinishedNamespaces(next)
	next.EndpointSlices = endpointSlices(next)
	return next
}

// Reconcile runs every controller once: what a lab change does after pods
// have gone. cur is not modified.
func (c Cluster) Reconcile(cur *labstore.State) (*labstore.State, error) {
	c.leaving = cur.Pods
	next := cur.Clone()
	if err := c.reconcileAll(next, "reconcile"); err != nil {
		return nil, err
	}
	return next, nil
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// resourceOf is the resource name the API server's NotFound error uses.
func resourceOf(obj any) string {
	switch obj.(type) {
	case *corev1.Namespace:
		return "namespaces"
	case *corev1.Pod:
		return "pods"
	case *corev1.Service:
		return "services"
	case *corev1.ConfigMap:
		return "configmaps"
	case *discoveryv1.EndpointSlice:
		return "endpointslices.discovery.k8s.io"
	case *appsv1.Deployment:
		return "deployments.apps"
	case *appsv1.ReplicaSet:
		return "replicasets.apps"
	case *appsv1.StatefulSet:
		return "statefulsets.apps"
	}
	return "daemonsets.apps"
}
