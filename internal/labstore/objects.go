package labstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

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

// ReadObjects loads every object of the lab and the generation they belong to.
// The generation is read first: a reader that races a writer sees objects at
// least as new as the generation it reports, and the next change notifies it.
func (s *Store) ReadObjects() (*State, int64, error) {
	gen, err := s.Generation()
	if err != nil {
		return nil, 0, err
	}
	st := &State{}
	for _, k := range storedKinds {
		if err := k.read(s, st); err != nil {
			return nil, 0, err
		}
	}
	return st, gen, nil
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
// generation (unchanged when nothing changed). Every object is encoded
// before any file changes; st's objects are not modified.
func (s *Store) WriteObjects(st *State) (int64, error) {
	want := make([]map[string][]byte, len(storedKinds))
	for i, k := range storedKinds {
		files, err := k.files(st)
		if err != nil {
			return 0, err
		}
		want[i] = files
	}
	changed := false
	for i, k := range storedKinds {
		c, err := s.syncKindDir(k.dir(), want[i])
		if err != nil {
			return 0, err
		}
		changed = changed || c
	}
	return s.bumpGeneration(changed)
}

// syncKindDir makes objects/<kind> hold exactly files: the others are
// removed, the new and changed ones written. It reports whether anything
// changed.
func (s *Store) syncKindDir(kind string, files map[string][]byte) (bool, error) {
	changed := false
	dir := s.Path("objects", kind)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	for _, e := range entries {
		if _, keep := files[e.Name()]; !keep {
			if err := s.RemoveFile("objects", kind, e.Name()); err != nil {
				return false, err
			}
			changed = true
		}
	}
	for name, data := range files {
		wrote, err := s.writeObjectFile(kind, name, data)
		if err != nil {
			return false, err
		}
		changed = changed || wrote
	}
	return changed, nil
}

// bumpGeneration returns the generation, incremented and written when
// something changed (or none was written yet).
func (s *Store) bumpGeneration(changed bool) (int64, error) {
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
	if err := decodeObject(data, &pod); err != nil || pod.DeletionTimestamp == nil {
		return time.Time{}, false
	}
	return pod.DeletionTimestamp.Time, true
}
