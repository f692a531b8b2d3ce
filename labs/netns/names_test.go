package netns

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadLabNamesTouchNothing: `svclab delete lab --name ..` used to print
// "lab .. deleted" and remove every lab's state, and `--name ../../X`
// removed X. Such names are refused before anything is read or removed.
func TestBadLabNamesTouchNothing(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "state", "labs")
	t.Setenv("SVCLAB_STATE_DIR", root)
	other := filepath.Join(root, "other")
	outside := filepath.Join(parent, "X")
	for _, dir := range []string{other, outside} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"..", "../../X", "../..", ".", "a/b", "Demo", strings.Repeat("a", 21)} {
		err := Delete(name)
		if err == nil || !strings.HasPrefix(err.Error(), "delete lab: lab name ") {
			t.Errorf("Delete(%q) = %v, want an invalid-name error", name, err)
		}
		if _, err := Open(name); err == nil || !strings.HasPrefix(err.Error(), "lab name ") {
			t.Errorf("Open(%q) = %v, want an invalid-name error", name, err)
		}
	}
	for _, dir := range []string{other, outside} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}
