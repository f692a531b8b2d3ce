package labstore

import (
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/boundedread"
)

// Directories below the store of the kinds a proxy watches one file at a
// time (see ReadServiceFile).
const (
	ServicesDir       = "objects/" + kindServices
	EndpointSlicesDir = "objects/" + kindEndpointSlices
)

// ObjectFileName is the file (in its kind's directory) of the object
// namespace/name.
func ObjectFileName(namespace, name string) string { return objectFileName(namespace, name) }

// IsObjectFile reports whether a directory entry is an object's file (not
// a temporary file of an atomic write).
func IsObjectFile(file string) bool {
	return filepath.Ext(file) == ".yaml" && !strings.HasPrefix(file, ".") && filepath.Base(file) == file
}

// ReadServiceFile reads one Service from its file in ServicesDir; an error
// wrapping os.ErrNotExist when the file is gone.
func (s *Store) ReadServiceFile(file string) (*corev1.Service, error) {
	return readObjectFile[corev1.Service](s, kindServices, file)
}

// ReadEndpointSliceFile reads one EndpointSlice from its file in
// EndpointSlicesDir; an error wrapping os.ErrNotExist when the file is gone.
func (s *Store) ReadEndpointSliceFile(file string) (*discoveryv1.EndpointSlice, error) {
	return readObjectFile[discoveryv1.EndpointSlice](s, kindEndpointSlices, file)
}

func readObjectFile[T any](s *Store, kind, file string) (*T, error) {
	if !IsObjectFile(file) {
		return nil, fmt.Errorf("lab store: %q is not an object file", file)
	}
	path, err := s.Confine("objects", kind, file)
	if err != nil {
		return nil, err
	}
	data, err := boundedread.ReadFile(path, maxObjectFileBytes)
	if err != nil {
		return nil, err
	}
	obj := new(T)
	if err := decodeObject(data, obj); err != nil {
		return nil, fmt.Errorf("lab store %s: %w", path, err)
	}
	return obj, nil
}
