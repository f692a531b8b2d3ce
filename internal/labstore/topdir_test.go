package labstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/roottest"
)

// topDirFlags reads dir's inode flags; ok is false when its file system
// keeps none.
func topDirFlags(t *testing.T, dir string) (marked, ok bool) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		return false, false
	}
	return flags&fsTopDirFlag != 0, true
}

func TestLockMarksTheStateRootAsATopDirectory(t *testing.T) {
	roottest.Require(t, "the mark is set on a directory root owns")
	root := traversableStateRoot(t)
	unlock, err := Open("one").Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	marked, ok := topDirFlags(t, root)
	if !ok {
		t.Skipf("%s is on a file system that keeps no inode flags (tmpfs?): nothing to mark", root)
	}
	if !marked {
		t.Fatalf("%s: FS_TOPDIR_FL not set after the first lock", root)
	}
}

func TestMarkTopDirLeavesStickyAndLinkedDirectoriesAlone(t *testing.T) {
	roottest.Require(t, "the mark is set on a directory root owns")
	base := t.TempDir()
	sticky := filepath.Join(base, "sticky")
	if err := os.Mkdir(sticky, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(base, "target")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	markTopDir(sticky)
	markTopDir(link)
	if _, ok := topDirFlags(t, target); !ok {
		t.Skipf("%s is on a file system that keeps no inode flags (tmpfs?)", base)
	}
	for _, dir := range []string{sticky, target} {
		if marked, _ := topDirFlags(t, dir); marked {
			t.Errorf("%s was marked", dir)
		}
	}
	markTopDir(target)
	if marked, _ := topDirFlags(t, target); !marked {
		t.Errorf("%s, a plain directory of root's, was not marked", target)
	}
}
