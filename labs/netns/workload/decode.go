package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/boundedread"
)

// Limits on a manifest: its size (the API server takes requests of at most
// 3 MiB, one object each; a file of many objects gets more room) and its
// number of objects.
const (
	MaxManifestBytes   = 8 << 20
	MaxManifestObjects = 1000
)

// ReadFile reads a manifest, at most MaxManifestBytes of it: a larger or
// endless input is an error naming the file after reading
// MaxManifestBytes+1 bytes.
func ReadFile(path string) ([]byte, error) {
	data, err := boundedread.ReadFile(path, MaxManifestBytes)
	if boundedread.IsTooLarge(err) {
		return nil, fmt.Errorf("manifest %s: larger than %s", path, boundedread.Size(MaxManifestBytes))
	}
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	return data, nil
}

// Manifests are the objects one apply brings, in the order they were read.
type Manifests struct {
	Namespaces     []*corev1.Namespace
	Pods           []*corev1.Pod
	Deployments    []*appsv1.Deployment
	ReplicaSets    []*appsv1.ReplicaSet
	StatefulSets   []*appsv1.StatefulSet
	DaemonSets     []*appsv1.DaemonSet
	Services       []*corev1.Service
	ConfigMaps     []*corev1.ConfigMap
	EndpointSlices []*discoveryv1.EndpointSlice

	// docs is the document number of every object Decode read, for errors.
	docs map[any]int
	// order is every object in the order of its document (kubectl applies
	// a file's objects in that order).
	order []any
}

// SupportedKinds are the apiVersion/kind pairs apply and delete take.
var SupportedKinds = []string{
	"v1/Namespace", "v1/Pod", "v1/Service", "v1/ConfigMap",
	"apps/v1/Deployment", "apps/v1/ReplicaSet", "apps/v1/StatefulSet", "apps/v1/DaemonSet",
	"discovery.k8s.io/v1/EndpointSlice",
}

// where names the document obj came from in errors: "<source>: document
// <n>", or just source for an object Decode did not read.
func (m *Manifests) where(source string, obj any) string {
	if n, ok := m.docs[obj]; ok {
		return fmt.Sprintf("%s: document %d", source, n)
	}
	return source
}

// Decode reads a multi-document YAML (or JSON) manifest, split into
// documents as kubectl does (a "---" line, optionally followed by a
// comment). Empty documents (nothing, comments or null) are skipped, and
// documents are numbered from 1 without them. Unknown fields and
// unsupported kinds are errors naming source, document and field, and so
// is a manifest without objects (kubectl says "no objects passed to
// apply"), one larger than MaxManifestBytes or one of more than
// MaxManifestObjects objects.
func Decode(data []byte, source string) (*Manifests, error) {
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("manifest %s: larger than %s", source, boundedread.Size(MaxManifestBytes))
	}
	m := &Manifests{docs: map[any]int{}}
	reader := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			if n == 1 {
				return nil, fmt.Errorf("manifest %s: no objects in it (only empty documents or comments)", source)
			}
			return m, nil
		}
		where := fmt.Sprintf("manifest %s: document %d", source, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if empty, err := isEmpty(doc); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		} else if empty {
			continue
		}
		if n > MaxManifestObjects {
			return nil, fmt.Errorf("%s: more than %d objects in one manifest", where, MaxManifestObjects)
		}
		n++
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if tm.Kind == "List" {
			return nil, fmt.Errorf("%s: kind List is not supported; write one document per object", where)
		}
		switch tm.APIVersion + "/" + tm.Kind {
		case "v1/Namespace":
			err = decodeInto(doc, where, m, n-1, &m.Namespaces)
		case "v1/Pod":
			err = decodeInto(doc, where, m, n-1, &m.Pods)
		case "apps/v1/Deployment":
			err = decodeInto(doc, where, m, n-1, &m.Deployments)
		case "apps/v1/ReplicaSet":
			err = decodeInto(doc, where, m, n-1, &m.ReplicaSets)
		case "apps/v1/StatefulSet":
			err = decodeInto(doc, where, m, n-1, &m.StatefulSets)
		case "apps/v1/DaemonSet":
			err = decodeInto(doc, where, m, n-1, &m.DaemonSets)
		case "v1/Service":
			err = decodeInto(doc, where, m, n-1, &m.Services)
		case "v1/ConfigMap":
			err = decodeInto(doc, where, m, n-1, &m.ConfigMaps)
		case "discovery.k8s.io/v1/EndpointSlice":
			err = decodeInto(doc, where, m, n-1, &m.EndpointSlices)
		default:
			err = fmt.Errorf("%s: apiVersion %q kind %q: unsupported in a lab (nothing applied; supported: v1 Namespace, Pod, Service, ConfigMap; apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet; discovery.k8s.io/v1 EndpointSlice)", where, tm.APIVersion, tm.Kind)
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeInto[T any](doc []byte, where string, m *Manifests, n int, into *[]*T) error {
	obj := new(T)
	if err := decodeStrict(doc, obj); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	*into = append(*into, obj)
	m.docs[obj] = n
	m.order = append(m.order, obj)
	return nil
}

// decodeStrict decodes YAML as the API server does with strict field
// validation: an unknown or duplicate field is an error with its full path.
func decodeStrict(doc []byte, into any) error {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(data, into)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return strict[0]
	}
	return nil
}

// isEmpty says whether a document holds no object: only blank lines and
// comments, or null. kubectl skips such documents too.
func isEmpty(doc []byte) (bool, error) {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return false, err
	}
	return bytes.Equal(bytes.TrimSpace(data), []byte("null")), nil
}
