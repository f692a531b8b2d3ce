package cache

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

// TestIntegrationProductRemovesAKilledBuildsMounts: a node-image build
// killed during debootstrap left its build directory with /proc mounted in
// it (under a key the next build no longer uses, after the mirror changed);
// the next build of the product unmounts and removes it instead of failing
// on it, and builds. The mount lives in a private mount namespace of the
// test's thread.
func TestIntegrationProductRemovesAKilledBuildsMounts(t *testing.T) {
	roottest.Require(t, "mounts proc")
	root := t.TempDir()
	stale := filepath.Join(root, "rootfs", "oldkey.tmp")
	if err := os.MkdirAll(filepath.Join(stale, "rootfs", "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	roottest.InPrivateMountNamespace(t, func() error {
		if err := syscall.Mount("proc", filepath.Join(stale, "rootfs", "proc"), "proc", 0, ""); err != nil {
			return err
		}
		path, hit, err := Product(context.Background(), root, "rootfs", "newkey", func(tmp string) error {
			return os.WriteFile(filepath.Join(tmp, "rootfs.tar"), []byte("x"), 0o600)
		})
		if err != nil || hit {
			return fmt.Errorf("Product after a killed build: %q hit=%v: %v", path, hit, err)
		}
		if _, err := os.Stat(stale); !os.IsNotExist(err) {
			return fmt.Errorf("the killed build's directory is left: %v", err)
		}
		return nil
	})
}
