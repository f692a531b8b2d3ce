package builtin

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLookupNamesBuiltInFiles(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		kind Kind
		want string // "" for none
	}{
		{"single-node", Lab, "single-node.yaml"},
		{"single-node.yaml", Lab, "single-node.yaml"},
		{"clusters/single-node.yaml", Lab, "single-node.yaml"},
		{"./clusters/nodeport.yaml", Lab, "nodeport.yaml"},
		{"single-node", Cluster, "kind/single-node.yaml"},
		{"flannel-vxlan", Cluster, "kind/flannel-vxlan.yaml"},
		{"clusters/kind/flannel-vxlan.yaml", Cluster, "kind/flannel-vxlan.yaml"},
		{"kind/flannel-vxlan.yaml", Cluster, "kind/flannel-vxlan.yaml"},
		{"nginx", Workload, "workloads/nginx.yaml"},
		{"workloads/nginx.yaml", Workload, "workloads/nginx.yaml"},
		{"clusters/workloads/nginx.yaml", Workload, "workloads/nginx.yaml"},
		{"workloads", Workload, "workloads"},
		{"clusters/workloads/", Workload, "workloads"},
		{"lessons/seed-001-ladder/nginx.yaml", Workload, "lessons/seed-001-ladder/nginx.yaml"},
		// names that are not built in, or no path inside them
		{"flannel-vxlan", Lab, ""},
		{"nginx", Lab, ""},
		{"lessons", Workload, ""},
		{"no-such", Workload, ""},
		{"../clusters/single-node.yaml", Lab, ""},
		{"workloads/../single-node.yaml", Lab, ""},
		{"..", Lab, ""},
		{".", Lab, ""},
		{"", Lab, ""},
		{"/single-node.yaml", Lab, ""},
		{"workloads//nginx.yaml", Workload, ""},
	} {
		got, ok := Lookup(tc.arg, tc.kind)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Lookup(%q, %s) = %q, %v; want %q", tc.arg, tc.kind, got, ok, tc.want)
		}
	}
}

// TestResolvePrefersARealFile: a file (or folder) that exists is used as
// it is, even when a built-in file has that name; a missing one that
// names a built-in file is that file on disk, byte for byte; anything
// else is an error naming the argument.
func TestResolvePrefersARealFile(t *testing.T) {
	t.Chdir(t.TempDir())
	useBase(t, t.TempDir())
	if err := os.WriteFile("single-node.yaml", []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := Resolve("single-node.yaml", Lab); err != nil || got != "single-node.yaml" {
		t.Fatalf("an existing file: Resolve = %q, %v; want it unchanged", got, err)
	}
	for _, arg := range []string{"-", ""} {
		if got, err := Resolve(arg, Workload); err != nil || got != arg {
			t.Fatalf("Resolve(%q) = %q, %v; want it unchanged", arg, got, err)
		}
	}
	got, err := Resolve("clusters/workloads/nginx.yaml", Workload)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fs.ReadFile(files, "workloads/nginx.yaml")
	if data, err := os.ReadFile(got); err != nil || string(data) != string(want) || !filepath.IsAbs(got) {
		t.Fatalf("Resolve(clusters/workloads/nginx.yaml) = %q: %v; want the built-in file on disk", got, err)
	}
	if _, err := Resolve("no-such.yaml", Workload); err == nil ||
		err.Error() != "no-such.yaml: no such file or directory, and no built-in workload of that name (svclab get examples lists them)" {
		t.Fatalf("Resolve(no-such.yaml): %v", err)
	}
}

// TestExtractWritesOnceAndPrivately: the files land in a folder named by
// their hash, inside a 0700 one; the same files reuse it, other files get
// another one beside it.
func TestExtractWritesOnceAndPrivately(t *testing.T) {
	base := filepath.Join(t.TempDir(), "builtin")
	v1 := fstest.MapFS{"a.yaml": {Data: []byte("one")}, "lessons/x/lesson.yaml": {Data: []byte("two")}}
	dir, err := extractFresh(v1, base)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != base {
		t.Fatalf("extract = %s, want a folder in %s", dir, base)
	}
	if fi, err := os.Stat(base); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v, %v; want mode 0700", base, fi.Mode(), err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "lessons", "x", "lesson.yaml")); err != nil || string(data) != "two" {
		t.Fatalf("lessons/x/lesson.yaml: %q, %v", data, err)
	}
	again, err := extractFresh(v1, base)
	if err != nil || again != dir {
		t.Fatalf("the same files again: %s, %v; want %s", again, err, dir)
	}
	v2 := fstest.MapFS{"a.yaml": {Data: []byte("one!")}, "lessons/x/lesson.yaml": {Data: []byte("two")}}
	other, err := extractFresh(v2, base)
	if err != nil || other == dir || filepath.Dir(other) != base {
		t.Fatalf("other files: %s, %v; want a folder of their own beside %s", other, err, dir)
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			t.Errorf("a temporary folder is left: %s", e.Name())
		}
	}
}

// TestExtractRefusesABaseOfSomeoneElse: a base that is a symbolic link
// (planted, say) is refused, not followed.
func TestExtractRefusesABaseOfSomeoneElse(t *testing.T) {
	tmp := t.TempDir()
	base := filepath.Join(tmp, "builtin")
	if err := os.Symlink(t.TempDir(), base); err != nil {
		t.Fatal(err)
	}
	if _, err := extractFresh(fstest.MapFS{"a.yaml": {Data: []byte("x")}}, base); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("extract into a symlink: %v; want a refusal", err)
	}
}

// extractFresh is extract without this process's remembered answer.
func extractFresh(fsys fs.FS, base string) (string, error) {
	extracted.Lock()
	extracted.base, extracted.dir = "", ""
	extracted.Unlock()
	return extract(fsys, base)
}

// useBase makes Dir extract into base for the test.
func useBase(t *testing.T, base string) {
	old := baseDirs
	baseDirs = func() []string { return []string{base} }
	t.Cleanup(func() { baseDirs = old })
	extracted.Lock()
	extracted.base, extracted.dir = "", ""
	extracted.Unlock()
}

func TestListShowsEveryKind(t *testing.T) {
	list, err := List()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Kind]int{}
	for _, e := range list {
		seen[e.Kind]++
		if got, ok := Lookup(e.Name, e.Kind); !ok || got != e.Path {
			t.Errorf("%s %s: its name looks up %q, %v; want %s", e.Kind, e.Name, got, ok, e.Path)
		}
		if e.About == "" {
			t.Errorf("%s: no comment to say what it is", e.Path)
		}
	}
	if seen[Lab] < 3 || seen[Cluster] < 5 || seen[Workload] < 5 {
		t.Fatalf("List: %v", seen)
	}
}

func TestAboutIsTheFirstSentence(t *testing.T) {
	for doc, want := range map[string]string{
		"# One node. Two clients.\nkind: Lab\n":                             "One node.",
		"# A cluster with\n# flannel:\n#   svclab create cluster\n# more\n": "A cluster with flannel",
		"kind: Lab\n": "",
		"# " + strings.Repeat("word ", 30) + "\n": strings.TrimSpace(strings.Repeat("word ", 20)) + "…",
		"# first line\n#\n# second paragraph\n":   "first line",
	} {
		if got := about(doc); got != want {
			t.Errorf("about(%q) = %q, want %q", doc, got, want)
		}
	}
}

// TestDirFallsBackToTheNextBase: a base folder that cannot be used (a
// user without a home; here a planted symbolic link) gives way to the
// next one.
func TestDirFallsBackToTheNextBase(t *testing.T) {
	tmp := t.TempDir()
	bad, good := filepath.Join(tmp, "bad"), filepath.Join(tmp, "good")
	if err := os.Symlink(t.TempDir(), bad); err != nil {
		t.Fatal(err)
	}
	old := baseDirs
	baseDirs = func() []string { return []string{bad, good} }
	t.Cleanup(func() { baseDirs = old })
	extracted.Lock()
	extracted.base, extracted.dir = "", ""
	extracted.Unlock()
	dir, err := Dir()
	if err != nil || filepath.Dir(dir) != good {
		t.Fatalf("Dir = %s, %v; want a folder in %s", dir, err, good)
	}
	baseDirs = func() []string { return []string{bad} }
	extracted.Lock()
	extracted.base, extracted.dir = "", ""
	extracted.Unlock()
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("Dir with no usable base: %v; want the first one's error", err)
	}
}
