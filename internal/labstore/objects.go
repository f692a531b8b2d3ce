package labstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/boundedread"
)

// Kind directories below objects/.
const (
	kindNamespaces     = "namespaces"
	kindDeployments    = "deployments"
	kindReplicaSets    = "replicasets"
	kindStatefulSets   = "statefulsets"
	kindDaemonSets     = "daemonsets"
	kindPods           = "pods"
	kindServices       = "services"
	kindConfigMaps     = "configmaps"
	kindEndpointSlices = "endpointslices"
)

var kinds = []string{kindNamespaces, kindDeployments, kindReplicaSets, kindStatefulSets, kindDaemonSets, kindPods, kindServices, kindConfigMaps, kindEndpointSlices}

// ReadObjects loads every object of the lab and the generation they belong to.
// The generation is read first: a reader that races a writer sees objects at
// least as new as the generation it reports, and the next change notifies it.
func (s *Store) ReadObjects() (*State, int64, error) {
	gen, err := s.Generation()
	if err != nil {
		return nil, 0, err
	}
	st := &State{}
	if err := readKind(s, kindNamespaces, &st.Namespaces); err != nil {
		return nil, 0, err
	}
	if err := readKind(s, kindDeployments, &st.Deployments); err != nil {
		return nil, 0, err
	}
	if err := readKind(s, kindReplicaSets, &st.ReplicaSets); err != nil {
		return nil, 0, err
	}
	if err := readKind(s, kindStatefulSets, &st.StatefulSets); err != nil {
		return nil, 0, err
	}
	if err := readKind(s, kindDaemonSets, &st.DaemonSets); err != nil {
		return nil, 0, err
	}
	if err := readKind(s, kindPods, &st.Pods); err != nil {
		return nil, 0, err
	}
	if err := readKind(s, kindServices, &st.Services); err != nil {
		return nil, 0, err
	}
	if err := readKind(s, kindConfigMaps, &st.ConfigMaps); err != nil {
		return nil, 0, err
	}
	if err := readKind(s, kindEndpointSlices, &st.EndpointSlices); err != nil {
		return nil, 0, err
	}
	return st, gen, nil
}

func readKind[T any](s *Store, kind string, into *[]*T) error {
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
		obj := new(T)
		if err := yaml.Unmarshal(data, obj); err != nil {
			return fmt.Errorf("lab store %s: %w", filepath.Join(dir, e.Name()), err)
		}
		*into = append(*into, obj)
	}
	return nil
}

// maxObjectFileBytes bounds the file of one object: the API server keeps
// objects of at most 1.5 MiB (etcd's request limit); a ConfigMap holds at
// most 1 MiB of data.
const maxObjectFileBytes = 4 << 20

// maxObjectFileName bounds the name of an object's file, well below the
// 255 bytes a file name may have (the atomic write's temporary file is
// named ".tmp-<digits>").
const maxObjectFileName = 200

// objectFileName is an object's file: <namespace>.<name>.yaml, or, when
// that would be too long (a ConfigMap or Deployment name may have 253
// characters), its first characters, "-" and a hash of the namespace and
// name, so that every object has its own file of a legal name. Readers take
// the object from the file's content, never from its name.
func objectFileName(ns, name string) string {
	file := ns + "." + name + ".yaml"
	if len(file) <= maxObjectFileName {
		return file
	}
	sum := sha256.Sum256([]byte(ns + "/" + name))
	hash := hex.EncodeToString(sum[:8])
	return file[:maxObjectFileName-len(hash)-len("-.yaml")] + "-" + hash + ".yaml"
}

// WriteObjects makes the store hold exactly st: changed objects are written,
// vanished ones removed, then the generation is bumped. It returns the new
// generation (unchanged when nothing changed).
func (s *Store) WriteObjects(st *State) (int64, error) {
	want := map[string]map[string][]byte{}
	add := func(kind, ns, name string, obj any) error {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		if want[kind] == nil {
			want[kind] = map[string][]byte{}
		}
		want[kind][objectFileName(ns, name)] = data
		return nil
	}
	for _, o := range st.Namespaces {
		o.APIVersion, o.Kind = "v1", "Namespace"
		if err := add(kindNamespaces, "namespace", o.Name, o); err != nil { // cluster-scoped: "namespace.<name>.yaml"
			return 0, err
		}
	}
	for _, o := range st.Deployments {
		o.APIVersion, o.Kind = "apps/v1", "Deployment"
		if err := add(kindDeployments, o.Namespace, o.Name, o); err != nil {
			return 0, err
		}
	}
	for _, o := range st.ReplicaSets {
		o.APIVersion, o.Kind = "apps/v1", "ReplicaSet"
		if err := add(kindReplicaSets, o.Namespace, o.Name, o); err != nil {
			return 0, err
		}
	}
	for _, o := range st.StatefulSets {
		o.APIVersion, o.Kind = "apps/v1", "StatefulSet"
		if err := add(kindStatefulSets, o.Namespace, o.Name, o); err != nil {
			return 0, err
		}
	}
	for _, o := range st.DaemonSets {
		o.APIVersion, o.Kind = "apps/v1", "DaemonSet"
		if err := add(kindDaemonSets, o.Namespace, o.Name, o); err != nil {
			return 0, err
		}
	}
	for _, o := range st.Pods {
		o.APIVersion, o.Kind = "v1", "Pod"
		if err := add(kindPods, o.Namespace, o.Name, o); err != nil {
			return 0, err
		}
	}
	for _, o := range st.Services {
		o.APIVersion, o.Kind = "v1", "Service"
		if err := add(kindServices, o.Namespace, o.Name, o); err != nil {
			return 0, err
		}
	}
	for _, o := range st.ConfigMaps {
		o.APIVersion, o.Kind = "v1", "ConfigMap"
		if err := add(kindConfigMaps, o.Namespace, o.Name, o); err != nil {
			return 0, err
		}
	}
	for _, o := range st.EndpointSlices {
		o.APIVersion, o.Kind = "discovery.k8s.io/v1", "EndpointSlice"
		if err := add(kindEndpointSlices, o.Namespace, o.Name, o); err != nil {
			return 0, err
		}
	}
	changed := false
	for _, kind := range kinds {
		dir := s.Path("objects", kind)
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
		for _, e := range entries {
			if _, keep := want[kind][e.Name()]; !keep {
				if err := s.RemoveFile("objects", kind, e.Name()); err != nil {
					return 0, err
				}
				changed = true
			}
		}
		for name, data := range want[kind] {
			if old, err := os.ReadFile(filepath.Join(dir, name)); err == nil && bytes.Equal(old, data) {
				continue
			}
			if err := s.WriteFile(filepath.Join("objects", kind, name), data); err != nil {
				return 0, err
			}
			changed = true
		}
	}
	gen, err := s.Generation()
	if err != nil {
		return 0, err
	}
	if !changed && gen > 0 {
		return gen, nil
	}
	gen++
	return gen, s.WriteFile(filepath.Join("objects", "GENERATION"), []byte(strconv.FormatInt(gen, 10)+"\n"))
}

// PodDeletionDeadline returns the deletionTimestamp of the stored pod
// namespace/name: the time by which a pod being deleted is to be gone
// (false when the pod is not stored or not being deleted).
func (s *Store) PodDeletionDeadline(namespace, name string) (time.Time, bool) {
	data, err := boundedread.ReadFile(s.Path("objects", kindPods, objectFileName(namespace, name)), maxObjectFileBytes)
	if err != nil {
		return time.Time{}, false
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(data, &pod); err != nil || pod.DeletionTimestamp == nil {
		return time.Time{}, false
	}
	return pod.DeletionTimestamp.Time, true
}
