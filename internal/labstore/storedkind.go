package labstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/svclab/svclab/internal/boundedread"
)

// storedKind is one kind below objects/: its directory, and how a State's
// objects of that kind are read from it and encoded into its files.
type storedKind interface {
	// dir is the directory below objects/.
	dir() string
	// read appends the objects of the kind's files to st.
	read(s *Store, st *State) error
	// files encodes st's objects of the kind: file name → content (encodeObject).
	files(st *State) (map[string][]byte, error)
}

// storedKinds are the kinds the store keeps, in the order they are read
// and written.
var storedKinds = []storedKind{
	kindOf(kindNamespaces, corev1.SchemeGroupVersion.WithKind("Namespace"), func(st *State) *[]*corev1.Namespace { return &st.Namespaces }),
	kindOf(kindDeployments, appsv1.SchemeGroupVersion.WithKind("Deployment"), func(st *State) *[]*appsv1.Deployment { return &st.Deployments }),
	kindOf(kindReplicaSets, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), func(st *State) *[]*appsv1.ReplicaSet { return &st.ReplicaSets }),
	kindOf(kindStatefulSets, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), func(st *State) *[]*appsv1.StatefulSet { return &st.StatefulSets }),
	kindOf(kindDaemonSets, appsv1.SchemeGroupVersion.WithKind("DaemonSet"), func(st *State) *[]*appsv1.DaemonSet { return &st.DaemonSets }),
	kindOf(kindPods, corev1.SchemeGroupVersion.WithKind("Pod"), func(st *State) *[]*corev1.Pod { return &st.Pods }),
	kindOf(kindServices, corev1.SchemeGroupVersion.WithKind("Service"), func(st *State) *[]*corev1.Service { return &st.Services }),
	kindOf(kindConfigMaps, corev1.SchemeGroupVersion.WithKind("ConfigMap"), func(st *State) *[]*corev1.ConfigMap { return &st.ConfigMaps }),
	kindOf(kindEndpointSlices, discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"), func(st *State) *[]*discoveryv1.EndpointSlice { return &st.EndpointSlices }),
}

// apiObject is what the store needs of a Kubernetes object's pointer type
// P (*T): its name and namespace, and its TypeMeta to fill in.
type apiObject[T any] interface {
	*T
	metav1.Object
	runtime.Object
}

// objectKind is the storedKind of objects of type T (P is *T).
type objectKind[T any, P apiObject[T]] struct {
	name    string                  // the directory below objects/
	gvk     schema.GroupVersionKind // apiVersion and kind of every file
	objects func(*State) *[]P       // where State holds them
}

// kindOf is the storedKind whose directory is dir, whose files carry gvk,
// and whose objects are objects(st).
func kindOf[T any, P apiObject[T]](dir string, gvk schema.GroupVersionKind, objects func(*State) *[]P) storedKind {
	return objectKind[T, P]{name: dir, gvk: gvk, objects: objects}
}

func (k objectKind[T, P]) dir() string { return k.name }

func (k objectKind[T, P]) read(s *Store, st *State) error {
	return readKind[T](s, k.name, k.objects(st))
}

// files encodes each object with apiVersion and kind set on a copy: the
// caller's objects are left as they are.
func (k objectKind[T, P]) files(st *State) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, o := range *k.objects(st) {
		copied := *o // a shallow copy: TypeMeta is a value, the rest is only read
		obj := P(&copied)
		obj.GetObjectKind().SetGroupVersionKind(k.gvk)
		data, err := encodeObject(obj)
		if err != nil {
			return nil, err
		}
		files[objectFileName(k.fileNamespace(obj), obj.GetName())] = data
	}
	return files, nil
}

// fileNamespace is the first part of an object's file name: its
// namespace, or "namespace" for a Namespace (cluster-scoped:
// "namespace.<name>.yaml").
func (k objectKind[T, P]) fileNamespace(obj P) string {
	if k.name == kindNamespaces {
		return "namespace"
	}
	return obj.GetNamespace()
}

// readKind appends the objects of one kind's files, in file name order,
// to into.
func readKind[T any, P apiObject[T]](s *Store, kind string, into *[]P) error {
	dir := s.Path("objects", kind)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".yaml" || e.Name()[0] == '.' {
			continue
		}
		data, err := boundedread.ReadFile(filepath.Join(dir, e.Name()), maxObjectFileBytes)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since the listing
		}
		if err != nil {
			return err
		}
		obj := P(new(T))
		if err := decodeObject(data, obj); err != nil {
			return fmt.Errorf("lab store %s: %w", filepath.Join(dir, e.Name()), err)
		}
		*into = append(*into, obj)
	}
	return nil
}
