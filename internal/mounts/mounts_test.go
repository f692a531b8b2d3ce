package mounts

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

func TestBelowReadsMountinfo(t *testing.T) {
	info := `22 1 0:21 / /proc rw,nosuid - proc proc rw
90 29 0:60 / /var/cache/svclab/kind/rootfs/a.tmp/rootfs/proc rw,relatime - proc proc rw
91 90 0:61 / /var/cache/svclab/kind/rootfs/a.tmp/rootfs/proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw
92 29 0:62 / /var/cache/svclab/kind/rootfs/a.tmp.other/x rw - tmpfs tmpfs rw
93 29 0:63 / /var/cache/svclab/kind/rootfs/a.tmp/with\040space rw - tmpfs tmpfs rw
94 29 0:64 / /var/cache/svclab/kind/rootfs/a.tmp rw - tmpfs tmpfs rw
`
	got, err := below(strings.NewReader(info), "/var/cache/svclab/kind/rootfs/a.tmp/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/var/cache/svclab/kind/rootfs/a.tmp/rootfs/proc/sys/fs/binfmt_misc",
		"/var/cache/svclab/kind/rootfs/a.tmp/rootfs/proc",
		"/var/cache/svclab/kind/rootfs/a.tmp/with space",
	}
	if !slices.Equal(got, want) {
		t.Errorf("below = %q, want %q (deepest first; not the directory itself, not a sibling with the same prefix)", got, want)
	}
}

// TestIntegrationRemoveAllUnmountsFirst: a tree with /proc mounted in it,
// as a killed debootstrap leaves its target, is removed whole (os.RemoveAll
// fails on it with "operation not permitted"), and the host's /proc is
// untouched. The mount lives in a private mount namespace of this test's
// thread so nothing outside sees it.
func TestIntegrationRemoveAllUnmountsFirst(t *testing.T) {
	roottest.Require(t, "mounts proc")
	dir := t.TempDir()
	tree := filepath.Join(dir, "rootfs")
	if err := os.MkdirAll(filepath.Join(tree, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "file"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	roottest.InPrivateMountNamespace(t, func() error {
		if err := syscall.Mount("proc", filepath.Join(tree, "proc"), "proc", 0, ""); err != nil {
			return err
		}
		if err := os.RemoveAll(tree); err == nil {
			return fmt.Errorf("os.RemoveAll removed a tree with /proc mounted in it: the test shows nothing")
		}
		if err := RemoveAll(tree); err != nil {
			return fmt.Errorf("RemoveAll: %w", err)
		}
		if _, err := os.Stat(tree); !os.IsNotExist(err) {
			return fmt.Errorf("the tree is left: %v", err)
		}
		return nil
	})
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Errorf("the host's /proc: %v", err)
	}
}
