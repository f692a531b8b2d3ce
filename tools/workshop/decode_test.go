package workshop

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseErrors decodes every bad lesson of testdata/bad: each gives one
// single-line *Error naming the file and the field (the whole list is
// testdata/bad.golden).
func TestParseErrors(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bad lessons: %v", err)
	}
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(data, p)
		var le *Error
		if !errors.As(err, &le) {
			t.Errorf("%s: got %v, want a *workshop.Error", p, err)
			continue
		}
		if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "lesson "+p+":") {
			t.Errorf("%s: %q: want one line starting with the file", p, err)
		}
		b.WriteString(err.Error() + "\n")
	}
	checkGolden(t, "bad.golden", b.String())
}

// TestParseGood decodes testdata/tiny.yaml and the example lesson into
// their typed form (testdata/*.json.golden).
func TestParseGood(t *testing.T) {
	for _, c := range []struct{ path, golden string }{
		{filepath.Join("testdata", "tiny.yaml"), "tiny.json.golden"},
		{filepath.Join("..", "..", "clusters", "lessons", "example-clusterip", "lesson.yaml"), "example-clusterip.json.golden"},
	} {
		data, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Parse(data, c.path)
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.MarshalIndent(l, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, c.golden, string(js)+"\n")
	}
}

// TestLoadChecksTheFolder: the name is the folder's, the lab file exists
// inside clusters/.
func TestLoadChecksTheFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "clusters", "lessons", "tiny")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tiny, err := os.ReadFile(filepath.Join("testdata", "tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(FileName, string(tiny))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "spec.lab \"lab.yaml\": no such lab file") {
		t.Errorf("no lab file: got %v", err)
	}
	write("lab.yaml", "x")
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Dir != dir || l.LabFile != filepath.Join(dir, "lab.yaml") {
		t.Errorf("Dir %s, LabFile %s", l.Dir, l.LabFile)
	}
	write(FileName, strings.Replace(string(tiny), "lab: lab.yaml", "lab: ../../../outside.yaml", 1))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "must name a file inside") {
		t.Errorf("a lab file outside clusters/: got %v", err)
	}
	write(FileName, strings.Replace(string(tiny), "name: tiny", "name: other", 1))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `must be the lesson's folder name "tiny"`) {
		t.Errorf("a name that is not the folder's: got %v", err)
	}
}
