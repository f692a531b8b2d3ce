package workload

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Manifests are the objects one apply brings, in the order they were read.
type Manifests struct {
	Pods        []*corev1.Pod
	Deployments []*appsv1.Deployment
	Services    []*corev1.Service
	ConfigMaps  []*corev1.ConfigMap
}

// documentSeparator splits a multi-document YAML stream like kubectl does.
var documentSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// Decode reads a multi-document YAML (or JSON) manifest. Unknown fields and
// unsupported kinds are errors naming source, document and field.
func Decode(data []byte, source string) (*Manifests, error) {
	m := &Manifests{}
	for i, doc := range documentSeparator.Split(string(data), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		where := fmt.Sprintf("manifest %s: document %d", source, i+1)
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if tm.Kind == "List" {
			return nil, fmt.Errorf("%s: kind List is not supported; write one document per object", where)
		}
		var err error
		switch tm.APIVersion + "/" + tm.Kind {
		case "v1/Pod":
			err = decodeInto(doc, where, &m.Pods)
		case "apps/v1/Deployment":
			err = decodeInto(doc, where, &m.Deployments)
		case "v1/Service":
			err = decodeInto(doc, where, &m.Services)
		case "v1/ConfigMap":
			err = decodeInto(doc, where, &m.ConfigMaps)
		default:
			err = fmt.Errorf("%s: apiVersion %q kind %q: unsupported (want v1 Pod, Service, ConfigMap or apps/v1 Deployment)", where, tm.APIVersion, tm.Kind)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

func decodeInto[T any](doc, where string, into *[]*T) error {
	obj := new(T)
	if err := decodeStrict([]byte(doc), obj); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	*into = append(*into, obj)
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

func stripComments(doc string) string {
	var b bytes.Buffer
	for _, line := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
