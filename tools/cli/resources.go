package cli

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/workload"
)

// resource is one kind `svclab get` and `describe` know, as kubectl names
// it: a new kind is one entry in resources (and a row function in
// kubeprint).
type resource struct {
	plural     string
	aliases    []string // singular and kubectl's short names
	gvk        schema.GroupVersionKind
	namespaced bool
	// list returns every object of the kind in the lab (all namespaces).
	list func(v *labView) ([]runtime.Object, error)
}

// labView is one read of a lab's store, shared by the kinds of a command.
type labView struct {
	lab  *netns.Lab
	objs *labstore.State
	// podObjs caches pods() (nil: not read yet).
	podObjs []*corev1.Pod
}

func newLabView(l *netns.Lab) (*labView, error) {
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	return &labView{lab: l, objs: objs}, nil
}

var resources = []resource{
	{plural: "pods", aliases: []string{"pod", "po"}, gvk: corev1.SchemeGroupVersion.WithKind("Pod"), namespaced: true,
		list: func(v *labView) ([]runtime.Object, error) {
			pods, err := v.pods()
			return objects(pods), err
		}},
	{plural: "services", aliases: []string{"service", "svc"}, gvk: corev1.SchemeGroupVersion.WithKind("Service"), namespaced: true,
		list: func(v *labView) ([]runtime.Object, error) { return objects(servicesAsRead(v)), nil }},
	{plural: "endpointslices", aliases: []string{"endpointslice"}, gvk: schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}, namespaced: true,
		list: func(v *labView) ([]runtime.Object, error) { return objects(v.objs.EndpointSlices), nil }},
	{plural: "configmaps", aliases: []string{"configmap", "cm"}, gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), namespaced: true,
		list: func(v *labView) ([]runtime.Object, error) { return objects(v.objs.ConfigMaps), nil }},
	{plural: "namespaces", aliases: []string{"namespace", "ns"}, gvk: corev1.SchemeGroupVersion.WithKind("Namespace"),
		list: func(v *labView) ([]runtime.Object, error) { return objects(namespaceObjects(v)), nil }},
	{plural: "deployments", aliases: []string{"deployment", "deploy"}, gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), namespaced: true,
		list: func(v *labView) ([]runtime.Object, error) {
			return withPodStatus(v, v.objs.Deployments, workload.DeploymentWithStatus)
		}},
	{plural: "replicasets", aliases: []string{"replicaset", "rs"}, gvk: appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), namespaced: true,
		list: func(v *labView) ([]runtime.Object, error) {
			return withPodStatus(v, v.objs.ReplicaSets, workload.ReplicaSetWithStatus)
		}},
	{plural: "statefulsets", aliases: []string{"statefulset", "sts"}, gvk: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), namespaced: true,
		list: func(v *labView) ([]runtime.Object, error) {
			return withPodStatus(v, v.objs.StatefulSets, workload.StatefulSetWithStatus)
		}},
	{plural: "daemonsets", aliases: []string{"daemonset", "ds"}, gvk: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), namespaced: true,
		list: func(v *labView) ([]runtime.Object, error) {
			return withPodStatus(v, v.objs.DaemonSets, v.lab.Cluster().DaemonSetWithStatus)
		}},
	{plural: "nodes", aliases: []string{"node", "no"}, gvk: corev1.SchemeGroupVersion.WithKind("Node"),
		list: func(v *labView) ([]runtime.Object, error) {
			nodes, err := v.lab.NodeObjects()
			return objects(nodes), err
		}},
}

// withPodStatus returns the controllers objs, each with the status its
// controller would write from the lab's pods (as get pods shows them).
func withPodStatus[T runtime.Object](v *labView, objs []T, status func(T, []*corev1.Pod) T) ([]runtime.Object, error) {
	pods, err := v.pods()
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, status(o, pods))
	}
	return out, nil
}

// pods are the lab's pods with their status, read once per view.
func (v *labView) pods() ([]*corev1.Pod, error) {
	if v.podObjs == nil {
		pods, err := v.lab.PodObjects(v.objs)
		if err != nil {
			return nil, err
		}
		v.podObjs = pods
	}
	return v.podObjs, nil
}

// resourceNamed returns the kind called name (plural, singular or short).
func resourceNamed(name string) (resource, bool) {
	for _, r := range resources {
		if r.plural == name {
			return r, true
		}
		for _, a := range r.aliases {
			if a == name {
				return r, true
			}
		}
	}
	return resource{}, false
}

// objects turns a slice of typed objects into runtime.Objects.
func objects[T runtime.Object](in []T) []runtime.Object {
	out := make([]runtime.Object, 0, len(in))
	for _, o := range in {
		out = append(out, o)
	}
	return out
}

// namespaceObjects is the lab's namespaces: every namespace its objects
// use, and default and kube-system (where the node proxies are), each
// Active since the lab was created. When the store keeps Namespace
// objects, this is the one function to switch to them.
func namespaceObjects(v *labView) []*corev1.Namespace {
	used := map[string]bool{}
	for _, name := range labstore.BuiltinNamespaces {
		used[name] = true
	}
	for _, o := range v.objs.Pods {
		used[o.Namespace] = true
	}
	for _, o := range v.objs.Services {
		used[o.Namespace] = true
	}
	for _, o := range v.objs.ConfigMaps {
		used[o.Namespace] = true
	}
	for _, o := range v.objs.Deployments {
		used[o.Namespace] = true
	}
	created := metav1.NewTime(v.lab.Created())
	var out []*corev1.Namespace
	for _, stored := range v.objs.Namespaces {
		// Created by a manifest: as stored (Active, or Terminating).
		out = append(out, stored.DeepCopy())
		delete(used, stored.Name)
	}
	for name := range used {
		out = append(out, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: created, Labels: map[string]string{"kubernetes.io/metadata.name": name}},
			Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// listed returns r's objects in the lab, each with its TypeMeta, sorted
// by namespace and name as the API server lists them.
func (r resource) listed(v *labView) ([]runtime.Object, error) {
	objs, err := r.list(v)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		o.GetObjectKind().SetGroupVersionKind(r.gvk)
	}
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i].(metav1.Object), objs[j].(metav1.Object)
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
	return objs, nil
}

// servicesAsRead are the lab's Services as the API server returns them:
// one stored by an older svclab, without ipFamilies, shows them
// defaulted (IP Families: IPv4), as after an upgrade of the API server.
func servicesAsRead(v *labView) []*corev1.Service {
	c := v.lab.Cluster()
	out := make([]*corev1.Service, 0, len(v.objs.Services))
	for _, svc := range v.objs.Services {
		out = append(out, c.ServiceAsRead(svc))
	}
	return out
}
