package labstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// Delta is a change of a few stored objects, written without the whole
// State (a lab holds thousands of Services and EndpointSlices; a change of
// one slice costs that slice): Write's objects are stored, each replacing
// the stored object of its kind, namespace and name; Remove's objects
// (their kind, namespace and name) are removed. The journal records a
// Delta in place of the whole State (Intent.Delta).
type Delta struct {
	Write  *State `json:"write,omitempty"`
	Remove *State `json:"remove,omitempty"`
}

// Empty reports whether the delta changes nothing.
func (d *Delta) Empty() bool {
	return d == nil || (d.Write.empty() && d.Remove.empty())
}

// WriteDelta makes the store hold d: its written objects' files are
// written (an unchanged one is left as it is), its removed objects' files
// removed, then the generation is bumped. It returns the new generation
// (unchanged when nothing changed). Every object is encoded before any
// file changes.
func (s *Store) WriteDelta(d *Delta) (int64, error) {
	write, remove := make([]map[string][]byte, len(storedKinds)), make([]map[string][]byte, len(storedKinds))
	for i, k := range storedKinds {
		var err error
		if d.Write != nil {
			if write[i], err = k.files(d.Write); err != nil {
				return 0, err
			}
		}
		if d.Remove != nil {
			if remove[i], err = k.files(d.Remove); err != nil {
				return 0, err
			}
		}
	}
	changed := false
	for i, k := range storedKinds {
		for name := range remove[i] {
			gone, err := s.removeObjectFile(k.dir(), name)
			if err != nil {
				return 0, err
			}
			changed = changed || gone
		}
		for name, data := range write[i] {
			c, err := s.writeObjectFile(k.dir(), name, data)
			if err != nil {
				return 0, err
			}
			changed = changed || c
		}
	}
	return s.bumpGeneration(changed)
}

// writeObjectFile writes one object's file of objects/<kind> unless it
// holds data already; it reports whether it wrote.
func (s *Store) writeObjectFile(kind, name string, data []byte) (bool, error) {
	if old, err := os.ReadFile(s.Path("objects", kind, name)); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := s.WriteFile(filepath.Join("objects", kind, name), data); err != nil {
		return false, err
	}
	return true, nil
}

// removeObjectFile removes one object's file of objects/<kind>; it
// reports whether there was one.
func (s *Store) removeObjectFile(kind, name string) (bool, error) {
	p, err := s.Confine("objects", kind, name)
	if err != nil {
		return false, err
	}
	if err := os.Remove(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// ReadObjectsButServices loads every object of the lab but its Services
// and EndpointSlices, the kinds a lab holds thousands of: what a change
// of a few hand-written EndpointSlices needs besides those slices
// (ReadEndpointSlice). The generation is read first, as in ReadObjects.
func (s *Store) ReadObjectsButServices() (*State, int64, error) {
	gen, err := s.Generation()
	if err != nil {
		return nil, 0, err
	}
	st := &State{}
	for _, k := range storedKinds {
		if k.dir() == kindServices || k.dir() == kindEndpointSlices {
			continue
		}
		if err := k.read(s, st); err != nil {
			return nil, 0, err
		}
	}
	return st, gen, nil
}

// ReadEndpointSlice returns the stored EndpointSlice namespace/name, nil
// when there is none.
func (s *Store) ReadEndpointSlice(namespace, name string) (*discoveryv1.EndpointSlice, error) {
	sl, err := s.ReadEndpointSliceFile(objectFileName(namespace, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return sl, err
}

// empty reports whether st holds no object.
func (st *State) empty() bool {
	return st == nil || len(st.Namespaces)+len(st.Deployments)+len(st.ReplicaSets)+len(st.StatefulSets)+len(st.DaemonSets)+
		len(st.Pods)+len(st.Services)+len(st.ConfigMaps)+len(st.EndpointSlices) == 0
}
