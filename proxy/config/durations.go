package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
)

// durationPaths lists the YAML paths of every metav1.Duration field of
// KubeProxyConfiguration ("iptables.syncPeriod", "configSyncPeriod", ...),
// found by reflection so a new upstream field is covered too.
var durationPaths = func() []string {
	var paths []string
	durationType := reflect.TypeFor[metav1.Duration]()
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft == durationType:
				paths = append(paths, prefix+name)
			case ft.Kind() == reflect.Struct:
				walk(ft, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeFor[kubeproxyconfigv1alpha1.KubeProxyConfiguration](), "")
	return paths
}()

// checkDurations reports a duration field that is not a Go duration string
// ("30s", "1m"), naming the field. metav1.Duration's own decoder returns a
// bare `time: invalid duration "x"` that would not say which field is wrong.
func checkDurations(source string, jsonData []byte) error {
	var doc map[string]any
	if err := json.Unmarshal(jsonData, &doc); err != nil {
		return nil // not an object: the typed decode reports it
	}
	for _, path := range durationPaths {
		v, ok := lookup(doc, path)
		if !ok || v == nil {
			continue
		}
		s, isString := v.(string)
		if !isString {
			return &Error{Source: source, Field: path, Value: jsonText(v),
				Reason: `not a duration: want a string such as "30s" or "1m"`}
		}
		if _, err := time.ParseDuration(s); err != nil {
			return &Error{Source: source, Field: path, Value: s,
				Reason: `not a duration: want a string such as "30s" or "1m"`}
		}
	}
	return nil
}

func lookup(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
