package topology

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// The file* types mirror the YAML document field by field. They only carry
// strings; convert turns them into the typed Lab.
type fileLab struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   fileMetadata `json:"metadata"`
	Spec       fileSpec     `json:"spec"`
}

type fileMetadata struct {
	Name string `json:"name"`
}

type fileSpec struct {
	CNI           string       `json:"cni"`
	PodSubnet     string       `json:"podSubnet"`
	ServiceSubnet string       `json:"serviceSubnet"`
	Proxy         fileProxy    `json:"proxy"`
	Nodes         []fileNode   `json:"nodes"`
	Clients       []fileClient `json:"clients"`
}

type fileProxy struct {
	Mode            string `json:"mode"`
	IPTablesBackend string `json:"iptablesBackend"`
}

type fileNode struct {
	Name    string `json:"name"`
	IP      string `json:"ip"`
	PodCIDR string `json:"podCIDR"`
}

type fileClient struct {
	Name string `json:"name"`
	IP   string `json:"ip"`
}

// Load reads, decodes and validates the lab file at path.
func Load(path string) (*Lab, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Source: path, Problem: fmt.Sprintf("cannot read: %v", err)}
	}
	return Parse(data, path)
}

// Parse decodes and validates a lab document. source names the document in
// error messages (usually its path).
func Parse(data []byte, source string) (*Lab, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{Source: source, Problem: "empty file: expected a Lab document"}
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, &Error{Source: source, Problem: "invalid YAML: " + cleanYAMLError(err)}
	}
	var raw any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, &Error{Source: source, Problem: "invalid YAML: " + err.Error()}
	}
	if raw == nil {
		return nil, &Error{Source: source, Problem: "empty file: expected a Lab document"}
	}
	if err := checkShape(raw, reflect.TypeFor[fileLab](), "", source); err != nil {
		return nil, err
	}
	var f fileLab
	if err := json.Unmarshal(js, &f); err != nil {
		// checkShape accepted the document, so this is a bug here.
		return nil, &Error{Source: source, Problem: "decoding: " + err.Error()}
	}
	lab, err := convert(&f, source)
	if err != nil {
		return nil, err
	}
	if err := lab.Validate(); err != nil {
		return nil, err
	}
	return lab, nil
}

// cleanYAMLError drops the converter's prefix and folds the multi-line
// "unmarshal errors" list into one line.
func cleanYAMLError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	msg = strings.Join(lines, " ")
	return strings.TrimPrefix(msg, "unmarshal errors: ")
}

// checkShape walks the decoded document against the file* types: every
// mapping key must be a known field, and every value must have the field's
// kind. This is what makes decoding strict, with the full field path in the
// message (encoding/json's own unknown-field error names no path).
func checkShape(v any, t reflect.Type, path, source string) error {
	where := path
	if where == "" {
		where = "(document)"
	}
	if v == nil {
		return nil // an explicit null is the same as an absent field
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return fieldErr(source, where, "", "expected a mapping, got %s", describe(v))
		}
		fields := map[string]reflect.StructField{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			fields[name] = f
			names = append(names, name)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := fields[k]
			if !ok {
				return fieldErr(source, join(path, k), "", "unknown field (known fields here: %s)", strings.Join(names, ", "))
			}
			if err := checkShape(m[k], f.Type, join(path, k), source); err != nil {
				return err
			}
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return fieldErr(source, where, "", "expected a list, got %s", describe(v))
		}
		for i, item := range list {
			if err := checkShape(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), source); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return fieldErr(source, where, "", "expected a string, got %s (quote it)", describe(v))
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", x)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	default:
		return fmt.Sprintf("%T", v)
	}
}
