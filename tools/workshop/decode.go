package workshop

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/svclab/svclab/internal/strictyaml"
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
	data, err := lessonFile.ReadFile(source)
	if err != nil {
		return nil, err
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
	l, err := strictyaml.Decode[Lesson](lessonFile, data, source)
	if err != nil {
		return nil, err
	}
	if err := l.validate(source); err != nil {
		return nil, err
	}
	return l, nil
}
