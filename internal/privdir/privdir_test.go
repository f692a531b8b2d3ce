package privdir

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

func TestEnsureMakesAPrivateDirectoryAndRepairsItsMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Dir(dir): 0o755} {
		if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != want || !fi.IsDir() {
			t.Errorf("%s: %v, %v; want a directory, mode %v", path, fi.Mode(), err, want)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v not repaired to 0700", fi.Mode())
	}
	if err := Ensure("relative/dir"); err == nil {
		t.Error("a relative path was accepted")
	}
}

func TestEnsureRefusesAParentOthersCanWrite(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(parent, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	err := Ensure(filepath.Join(parent, "private"))
	if err == nil || !strings.Contains(err.Error(), parent+": mode") {
		t.Fatalf("error %v; want one naming %s and its mode", err, parent)
	}
}

// A local user who knows the path plants it first in a directory like
// /tmp: a symbolic link to a directory of theirs, or a directory of their
// own. Root refuses both and makes nothing through the link.
func TestEnsureRefusesWhatNobodyPlanted(t *testing.T) {
	roottest.Require(t, "acts as the user nobody against a directory made as root")
	shared := roottest.SharedTmp(t)
	roottest.RunAsNobody(t, `cd `+shared+`
mkdir theirs target
chmod 777 theirs
ln -s "$PWD/target" link`)
	for name, want := range map[string]string{"link": "a symbolic link", "theirs": "owned by uid"} {
		err := Ensure(filepath.Join(shared, name))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Ensure(%s) planted by nobody: %v; want an error saying %q", name, err, want)
		}
	}
	if err := Ensure(filepath.Join(shared, "link", "sub")); err == nil || !strings.Contains(err.Error(), "a symbolic link") {
		t.Errorf("Ensure below nobody's link: %v; want a refusal", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(shared, "target")); len(entries) != 0 {
		t.Errorf("root made %v in nobody's directory through the link", entries)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(shared, "theirs"), &st); err != nil || st.Mode&0o777 != 0o777 {
		t.Errorf("nobody's directory changed: mode %o, %v", st.Mode&0o777, err)
	}
}
