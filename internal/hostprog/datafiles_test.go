package hostprog

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// A missing data file has its package installed like a missing program's;
// one that is there costs nothing.
func TestEnsureInstallsTheArchiveKeyringWhenMissing(t *testing.T) {
	f := &fakeHost{have: map[string]bool{Debootstrap: true}}
	h := f.host(true, nil)
	installed := false
	h.StatFile = func(path string) error {
		if path == DebianArchiveKeyring && !installed {
			return errors.New("no such file")
		}
		return nil
	}
	run := h.Run
	h.Run = func(ctx context.Context, env []string, argv ...string) (string, error) {
		installed = installed || slices.Contains(argv, "debian-archive-keyring")
		return run(ctx, env, argv...)
	}
	pkgs, err := h.Ensure(context.Background(), append(Needs(Cluster), NeedsFiles(Cluster)...)...)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkgs, "debian-archive-keyring") || slices.Contains(pkgs, "ca-certificates") {
		t.Errorf("installed %v; want debian-archive-keyring (and not ca-certificates, which is there)", pkgs)
	}
	f.ran = nil
	if pkgs, err := h.Ensure(context.Background(), DebianArchiveKeyring); err != nil || pkgs != nil || f.ran != nil {
		t.Errorf("with the keyring there: %v, %v, ran %q; want nothing done", pkgs, err, f.ran)
	}
}

func TestDataFilesTable(t *testing.T) {
	for _, f := range DataFiles {
		if f.Path == "" || f.Path[0] != '/' || f.Package == "" || f.Why == "" {
			t.Errorf("data file %+v: want an absolute path, a package and a why", f)
		}
		if _, ok := Lookup(f.Path); ok {
			t.Errorf("%s is declared as a program too", f.Path)
		}
	}
	if !slices.Contains(NeedsFiles(Cluster), DebianArchiveKeyring) {
		t.Error("the node image's debootstrap does not ensure the archive keyring")
	}
}
