package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/clusters"
)

// useBuiltinDirs makes the built-in files land in a temporary folder
// (root's beside $SVCLAB_STATE_DIR, others' in $XDG_CACHE_HOME) and runs
// the test in an empty folder: no checkout.
func useBuiltinDirs(t *testing.T) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("SVCLAB_STATE_DIR", filepath.Join(tmp, "state", "labs"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	t.Chdir(t.TempDir())
}

// TestManifestFilesFindBuiltInWorkloads: -f of a path that does not exist
// takes the built-in workload of that name (with or without clusters/,
// a file or the folder); a file that exists wins.
func TestManifestFilesFindBuiltInWorkloads(t *testing.T) {
	useBuiltinDirs(t)
	want, err := fs.ReadFile(clusters.FS, "workloads/nginx.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"workloads/nginx.yaml", "clusters/workloads/nginx.yaml", "nginx"} {
		got, err := manifestFiles([]string{arg}, false)
		if err != nil || len(got) != 1 {
			t.Fatalf("-f %s: %v, %v", arg, got, err)
		}
		if data, err := os.ReadFile(got[0]); err != nil || string(data) != string(want) {
			t.Errorf("-f %s read %s: not the built-in workloads/nginx.yaml (%v)", arg, got[0], err)
		}
	}
	dir, err := manifestFiles([]string{"workloads/"}, false)
	if entries, _ := fs.Glob(clusters.FS, "workloads/*.yaml"); err != nil || len(dir) != len(entries) {
		t.Errorf("-f workloads/: %v, %v; want its %d files", dir, err, len(entries))
	}
	if err := os.MkdirAll("workloads", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("workloads", "nginx.yaml"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := manifestFiles([]string{"workloads/nginx.yaml"}, false); err != nil || len(got) != 1 || got[0] != "workloads/nginx.yaml" {
		t.Errorf("-f workloads/nginx.yaml beside a file of that path: %v, %v; want the file", got, err)
	}
	if _, err := manifestFiles([]string{"workloads/nope.yaml"}, false); err == nil ||
		!strings.Contains(err.Error(), "-f workloads/nope.yaml: stat workloads/nope.yaml: no such file or directory (nor a built-in workload: svclab get examples lists them)") {
		t.Errorf("-f workloads/nope.yaml: %v", err)
	}
}
