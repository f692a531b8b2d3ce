package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/netns/workload"
)

// -f DIR reads a directory's .json, .yaml and .yml files in lexical
// order, its subdirectories' with -R; -f - is stdin, once.
func TestManifestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yml", "a.yaml", "c.json", "notes.txt", "sub/d.yaml", "sub/deeper/e.json", "empty/README", "onlysub/inner/f.yaml"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			r, _ := filepath.Rel(dir, p)
			out = append(out, r)
		}
		return out
	}
	got, err := manifestFiles([]string{dir, "-", filepath.Join(dir, "notes.txt")}, false)
	if want := []string{"a.yaml", "b.yml", "c.json", "-", "notes.txt"}; err != nil || !slices.Equal(rel(got[:3]), want[:3]) || got[3] != "-" || rel(got[4:])[0] != want[4] {
		t.Errorf("-f DIR -f - -f notes.txt: %v, %v; want %v", got, err, want)
	}
	got, err = manifestFiles([]string{dir}, true)
	if want := []string{"a.yaml", "b.yml", "c.json", "onlysub/inner/f.yaml", "sub/d.yaml", "sub/deeper/e.json"}; err != nil || !slices.Equal(rel(got), want) {
		t.Errorf("-R -f DIR: %v, %v; want %v", rel(got), err, want)
	}
	for _, tc := range []struct {
		args      []string
		recursive bool
		want      string
	}{
		{[]string{"-", "-"}, false, "-f -: stdin can be read once only"},
		{[]string{filepath.Join(dir, "empty")}, true, "-f " + filepath.Join(dir, "empty") + ": no .json, .yaml or .yml file in it"},
		{[]string{filepath.Join(dir, "onlysub")}, false, "(-R reads its subdirectories)"},
		{[]string{filepath.Join(dir, "nope.yaml")}, false, "-f " + filepath.Join(dir, "nope.yaml") + ": stat"},
	} {
		if _, err := manifestFiles(tc.args, tc.recursive); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("manifestFiles(%v, %v) = %v, want an error with %q", tc.args, tc.recursive, err, tc.want)
		}
	}
}

// -f - reads stdin bounded as a file is, and errors name STDIN.
func TestReadManifestFromStdin(t *testing.T) {
	m, source, err := readManifest("-", strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n"))
	if err != nil || source != "STDIN" || len(m.Namespaces) != 1 {
		t.Fatalf("readManifest(-) = %v, %q, %v", m, source, err)
	}
	if _, _, err := readManifest("-", strings.NewReader("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n")); err == nil || !strings.Contains(err.Error(), "manifest STDIN: document 1") {
		t.Errorf("a Secret on stdin: %v, want an error naming STDIN and the document", err)
	}
	endless := strings.NewReader(strings.Repeat("#", workload.MaxManifestBytes+10))
	if _, _, err := readManifest("-", endless); err == nil || err.Error() != "manifest STDIN: larger than 8 MiB" {
		t.Errorf("a large stdin: %v", err)
	}
}
