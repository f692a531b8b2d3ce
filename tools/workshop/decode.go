package workshop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/boundedread"
)

// MaxFileBytes bounds a lesson file.
const MaxFileBytes = 256 << 10

// Load reads the lesson in dir (dir/lesson.yaml), decodes and validates
// it, and checks what needs the file system: the lesson's name is its
// folder's, and its lab file exists inside the clusters/ folder that holds
// the lessons (dir is clusters/lessons/<name>).
func Load(dir string) (*Lesson, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	source := filepath.Join(dir, FileName)
	data, err := boundedread.ReadFile(source, MaxFileBytes)
	if boundedread.IsTooLarge(err) {
		return nil, &Error{Source: source, Problem: fmt.Sprintf("larger than %s: not a lesson file", boundedread.Size(MaxFileBytes))}
	}
	if err != nil {
		return nil, &Error{Source: source, Problem: fmt.Sprintf("cannot read: %v", err)}
	}
	l, err := Parse(data, source)
	if err != nil {
		return nil, err
	}
	if l.Metadata.Name != filepath.Base(dir) {
		return nil, fieldErr(source, "metadata.name", l.Metadata.Name, "must be the lesson's folder name %q", filepath.Base(dir))
	}
	l.Dir = dir
	clusters := filepath.Dir(filepath.Dir(dir))
	l.LabFile = filepath.Join(dir, l.Spec.Lab)
	if rel, err := filepath.Rel(clusters, l.LabFile); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil, fieldErr(source, "spec.lab", l.Spec.Lab, "must name a file inside %s", clusters)
	}
	if fi, err := os.Stat(l.LabFile); err != nil || !fi.Mode().IsRegular() {
		return nil, fieldErr(source, "spec.lab", l.Spec.Lab, "no such lab file (%s)", l.LabFile)
	}
	return l, nil
}

// Parse decodes and validates a lesson document (without touching the file
// system). source names it in errors.
func Parse(data []byte, source string) (*Lesson, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{Source: source, Problem: fmt.Sprintf("larger than %s: not a lesson file", boundedread.Size(MaxFileBytes))}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{Source: source, Problem: "empty file: expected a Lesson document"}
	}
	if err := oneDocument(data, source); err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, &Error{Source: source, Problem: "invalid YAML: " + cleanYAMLError(err)}
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return nil, &Error{Source: source, Problem: "empty file: expected a Lesson document"}
	}
	var l Lesson
	strictErrs, err := kjson.UnmarshalStrict(js, &l)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "(document)"
		}
		return nil, fieldErr(source, field, "", "expected %s, got a %s", kindName(typeErr.Type.Kind().String()), typeErr.Value)
	case err != nil:
		return nil, &Error{Source: source, Problem: "decoding: " + err.Error()}
	}
	if len(strictErrs) > 0 {
		var fe kjson.FieldError
		if errors.As(strictErrs[0], &fe) {
			problem, _, _ := strings.Cut(strictErrs[0].Error(), ` "`)
			return nil, fieldErr(source, fe.FieldPath(), "", "%s", problem)
		}
		return nil, &Error{Source: source, Problem: strictErrs[0].Error()}
	}
	if err := l.validate(source); err != nil {
		return nil, err
	}
	return &l, nil
}

// kindName says a Go kind as a lesson writer reads it.
func kindName(kind string) string {
	switch kind {
	case "struct", "map":
		return "a mapping"
	case "slice":
		return "a list"
	case "string":
		return "a string"
	case "int", "float64":
		return "a number"
	}
	return kind
}

// oneDocument makes sure the file holds one YAML document (empty ones
// aside): a second Lesson would otherwise be ignored without a word.
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
			continue
		}
		if n++; n > 1 {
			return &Error{Source: source, Field: fmt.Sprintf("document %d", n), Problem: "a lesson file holds one Lesson: this second document would be ignored"}
		}
	}
}

// cleanYAMLError drops the converter's prefix and folds a multi-line
// message into one line.
func cleanYAMLError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.TrimPrefix(strings.Join(lines, " "), "unmarshal errors: ")
}
