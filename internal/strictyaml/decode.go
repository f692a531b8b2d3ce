package strictyaml

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

// Format describes one of svclab's file formats for its errors and bounds.
type Format struct {
	// Prefix starts every error: "topology", "lesson".
	Prefix string
	// Kind is the document's kind as errors name it: "Lab", "Lesson".
	Kind string
	// Noun names a file of the format: "lab file", "lesson file".
	Noun string
	// SecondDocumentHint ends the error about a second document.
	SecondDocumentHint string
	// MaxBytes bounds a file.
	MaxBytes int
}

// ReadFile reads a file of the format, at most MaxBytes of it: a larger
// file (or an endless one such as /dev/zero) is an *Error after reading
// MaxBytes+1 bytes.
func (f Format) ReadFile(path string) ([]byte, error) {
	data, err := boundedread.ReadFile(path, int64(f.MaxBytes))
	if boundedread.IsTooLarge(err) {
		return nil, f.tooLarge(path)
	}
	if err != nil {
		return nil, f.docError(path, fmt.Sprintf("cannot read: %v", err))
	}
	return data, nil
}

func (f Format) tooLarge(source string) *Error {
	return f.docError(source, fmt.Sprintf("larger than %s: not a %s", boundedread.Size(int64(f.MaxBytes)), f.Noun))
}

// Decode decodes data, one YAML document of the format, into a new T with
// sigs.k8s.io/json's strict decoding, as the API server does: an unknown
// field is an error naming its full path and the fields known there (the
// first one: keys are in sorted order at each level, as YAMLToJSON writes
// them), and so is a value of the wrong kind. source names the document in
// errors (usually its path). T's fields carry json tags.
func Decode[T any](f Format, data []byte, source string) (*T, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, f.empty(source)
	}
	if len(data) > f.MaxBytes {
		return nil, f.tooLarge(source)
	}
	if err := f.oneDocument(data, source); err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, f.docError(source, "invalid YAML: "+cleanYAMLError(err))
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return nil, f.empty(source)
	}
	var v T
	strictErrs, err := kjson.UnmarshalStrict(js, &v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		return nil, f.wrongKind(js, typeErr, source)
	case err != nil:
		return nil, f.docError(source, "decoding: "+err.Error())
	}
	if len(strictErrs) == 0 {
		return &v, nil
	}
	se := strictErrs[0]
	var fe kjson.FieldError
	if !errors.As(se, &fe) {
		return nil, f.docError(source, se.Error())
	}
	// se reads `unknown field "a.b"` (duplicates are YAML errors already).
	problem, _, _ := strings.Cut(se.Error(), ` "`)
	if known := knownFields(reflect.TypeFor[T](), fe.FieldPath()); len(known) > 0 {
		problem += " (known fields here: " + strings.Join(known, ", ") + ")"
	}
	return nil, f.FieldError(source, fe.FieldPath(), "", "%s", problem)
}

func (f Format) empty(source string) *Error {
	return f.docError(source, "empty file: expected a "+f.Kind+" document")
}

// oneDocument makes sure the file holds one YAML document (besides empty
// ones: blank, comments only, or null): a second one would otherwise be
// ignored without a word.
func (f Format) oneDocument(data []byte, source string) error {
	reader := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	n := 0
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return f.docError(source, "invalid YAML: "+cleanYAMLError(err))
		}
		if js, err := yaml.YAMLToJSON(doc); err == nil && bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue // empty documents do not count; a bad one does
		}
		if n++; n > 1 {
			return &Error{Prefix: f.Prefix, Source: source, Field: fmt.Sprintf("document %d", n),
				Problem: fmt.Sprintf("a %s holds one %s: this second document would be ignored%s", f.Noun, f.Kind, f.SecondDocumentHint)}
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

// knownFields lists the JSON names of the fields of the struct that holds
// the unknown field at path: path is followed from t through known field
// names (and list indices) until the next name is not a field.
func knownFields(t reflect.Type, path string) []string {
	for {
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
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
			field := t.Field(i)
			tag, _, _ := strings.Cut(field.Tag.Get("json"), ",")
			if tag == "-" || (tag == "" && !field.IsExported()) {
				continue
			}
			names = append(names, tag)
			if tag == name {
				next = field.Type
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
func (f Format) wrongKind(js []byte, e *json.UnmarshalTypeError, source string) error {
	path, got := "(document)", e.Value
	v, ok := valueAt(js, e.Field, e.Offset)
	if ok {
		if v.path != "" {
			path = v.path
		}
		got = describe(v.token)
	}
	switch e.Type.Kind() {
	case reflect.Struct, reflect.Map:
		return f.FieldError(source, path, "", "expected a mapping, got %s", got)
	case reflect.Slice:
		return f.FieldError(source, path, "", "expected a list, got %s", got)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return f.FieldError(source, path, "", "expected a whole number, got %s", got)
	case reflect.Float32, reflect.Float64:
		return f.FieldError(source, path, "", "expected a number, got %s", got)
	case reflect.Bool:
		return f.FieldError(source, path, "", "expected true or false, got %s", got)
	case reflect.String:
		if _, isDelim := v.token.(json.Delim); ok && !isDelim {
			got += " (quote it)" // YAML read a number or boolean
		}
		return f.FieldError(source, path, "", "expected a string, got %s", got)
	}
	return f.FieldError(source, path, "", "expected %s, got %s", e.Type, got)
}
