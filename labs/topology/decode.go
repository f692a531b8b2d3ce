package topology

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/boundedread"
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
	LoadBalancer  fileLB       `json:"loadBalancer"`
	ExternalIPs   []string     `json:"externalIPs"`
}

type fileLB struct {
	Pool string `json:"pool"`
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
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// ReadFile reads a lab file, at most MaxFileBytes of it: a larger file (or
// an endless one such as /dev/zero) is an *Error after reading
// MaxFileBytes+1 bytes.
func ReadFile(path string) ([]byte, error) {
	data, err := boundedread.ReadFile(path, MaxFileBytes)
	if boundedread.IsTooLarge(err) {
		return nil, &Error{Source: path, Problem: fmt.Sprintf("larger than %s: not a lab file", boundedread.Size(MaxFileBytes))}
	}
	if err != nil {
		return nil, &Error{Source: path, Problem: fmt.Sprintf("cannot read: %v", err)}
	}
	return data, nil
}

// Parse decodes and validates a lab document. source names the document in
// error messages (usually its path).
func Parse(data []byte, source string) (*Lab, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{Source: source, Problem: "empty file: expected a Lab document"}
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{Source: source, Problem: fmt.Sprintf("larger than %s: not a lab file", boundedread.Size(MaxFileBytes))}
	}
	if err := oneDocument(data, source); err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, &Error{Source: source, Problem: "invalid YAML: " + cleanYAMLError(err)}
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return nil, &Error{Source: source, Problem: "empty file: expected a Lab document"}
	}
	f, err := decodeStrict(js, source)
	if err != nil {
		return nil, err
	}
	lab, err := convert(f, source)
	if err != nil {
		return nil, err
	}
	if err := lab.Validate(); err != nil {
		return nil, err
	}
	return lab, nil
}

// oneDocument makes sure the file holds one YAML document (besides empty
// ones: blank, comments only, or null): a second Lab would otherwise be
// ignored without a word.
func oneDocument(data []byte, source string) error {
	reader := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	n := 0
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &Error{Source: source, Problem: "invalid YAML: " + cleanYAMLError(err)}
		}
		if js, err := yaml.YAMLToJSON(doc); err == nil && bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue // empty documents do not count; a bad one does
		}
		if n++; n > 1 {
			return &Error{Source: source, Field: fmt.Sprintf("document %d", n), Problem: "a lab file holds one Lab: this second document would be ignored (write one file per lab)"}
		}
	}
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

// decodeStrict decodes the JSON form of the lab file into the file* types
// with sigs.k8s.io/json's strict decoding, as the API server does: an
// unknown field is an error naming its full path (the first one: keys are
// in sorted order at each level, as YAMLToJSON writes them), and so is a
// value of the wrong kind.
func decodeStrict(js []byte, source string) (*fileLab, error) {
	var f fileLab
	strictErrs, err := kjson.UnmarshalStrict(js, &f)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		return nil, wrongKind(js, typeErr, source)
	case err != nil:
		return nil, &Error{Source: source, Problem: "decoding: " + err.Error()}
	}
	if len(strictErrs) == 0 {
		return &f, nil
	}
	se := strictErrs[0]
	var fe kjson.FieldError
	if !errors.As(se, &fe) {
		return nil, &Error{Source: source, Problem: se.Error()}
	}
	// se reads `unknown field "a.b"` (duplicates are YAML errors already).
	problem, _, _ := strings.Cut(se.Error(), ` "`)
	if known := knownFields(reflect.TypeFor[fileLab](), fe.FieldPath()); len(known) > 0 {
		problem += " (known fields here: " + strings.Join(known, ", ") + ")"
	}
	return nil, fieldErr(source, fe.FieldPath(), "", "%s", problem)
}

// knownFields lists the JSON names of the fields of the struct that holds
// the unknown field at path: path is followed from t through known field
// names (and list indices) until the next name is not a field.
func knownFields(t reflect.Type, path string) []string {
	for {
		for t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		segment, rest, more := strings.Cut(path, ".")
		name, _, _ := strings.Cut(segment, "[")
		var names []string
		var next reflect.Type
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, tag)
			if tag == name {
				next = f.Type
			}
		}
		if next == nil || !more {
			return names
		}
		t, path = next, rest
	}
}

// wrongKind turns a type error into "<path>: expected a string, got the
// number 7". encoding/json names the field without list indices
// (spec.nodes.name) and gives the input offset of the error, so the value is
// found again in js: the last value at that index-free path that starts
// before the offset.
func wrongKind(js []byte, e *json.UnmarshalTypeError, source string) error {
	path, got := "(document)", e.Value
	v, ok := valueAt(js, e.Field, e.Offset)
	if ok {
		if v.path != "" {
			path = v.path
		}
		got = describe(v.token)
	}
	switch e.Type.Kind() {
	case reflect.Struct:
		return fieldErr(source, path, "", "expected a mapping, got %s", got)
	case reflect.Slice:
		return fieldErr(source, path, "", "expected a list, got %s", got)
	case reflect.String:
		if _, isDelim := v.token.(json.Delim); ok && !isDelim {
			got += " (quote it)" // YAML read a number or boolean
		}
		return fieldErr(source, path, "", "expected a string, got %s", got)
	}
	return fieldErr(source, path, "", "expected %s, got %s", e.Type, got)
}

// A jsonValue is one value of a JSON document: its field path with list
// indices (spec.nodes[0].name) and its first token (a literal or an opening
// delimiter).
type jsonValue struct {
	path  string
	token json.Token
}

// valueAt scans js for the values whose path without list indices is field
// and returns the last one that starts before offset.
func valueAt(js []byte, field string, offset int64) (jsonValue, bool) {
	type frame struct {
		array bool
		index int
		key   string
		path  string
	}
	var (
		stack []*frame
		found jsonValue
		ok    bool
	)
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return found, ok
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, isDelim := tok.(json.Delim); isDelim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && !top.array && top.key == "" {
			top.key = tok.(string) // an object key
			continue
		}
		path, plain := "", ""
		switch {
		case top == nil:
		case top.array:
			path, plain = fmt.Sprintf("%s[%d]", top.path, top.index), stripIndices(top.path)
			top.index++
		default:
			path, plain = join(top.path, top.key), join(stripIndices(top.path), top.key)
			top.key = ""
		}
		if plain == field && start < offset {
			found, ok = jsonValue{path: path, token: tok}, true
		}
		if d, isDelim := tok.(json.Delim); isDelim {
			stack = append(stack, &frame{array: d == '[', path: path})
		}
	}
}

// stripIndices drops the list indices from a field path, as encoding/json
// names fields: spec.nodes[1].name becomes spec.nodes.name.
func stripIndices(path string) string {
	var b strings.Builder
	inIndex := false
	for _, r := range path {
		switch {
		case r == '[':
			inIndex = true
		case r == ']':
			inIndex = false
		case !inIndex:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(tok json.Token) string {
	switch x := tok.(type) {
	case json.Delim:
		if x == '[' {
			return "a list"
		}
		return "a mapping"
	case string:
		return fmt.Sprintf("the string %q", x)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	default:
		return fmt.Sprintf("%T", tok)
	}
}
