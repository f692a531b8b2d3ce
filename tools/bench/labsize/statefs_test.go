package labsize

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStateFilesystemOfADirectoryNotMadeYet: the filesystem of a state
// directory that does not exist yet is its nearest parent's, named; an
// unknown magic is given in hex.
func TestStateFilesystemOfADirectoryNotMadeYet(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	got, err := stateFilesystem(filepath.Join(dir, "svclab", "labs"))
	if err != nil || got != fsName(int64(st.Type)) || got == "" {
		t.Errorf("stateFilesystem = %q, %v; want %q", got, err, fsName(int64(st.Type)))
	}
	if _, err := os.Stat(filepath.Join(dir, "svclab")); !os.IsNotExist(err) {
		t.Errorf("stateFilesystem made a directory: %v", err)
	}
	if got := fsName(unix.TMPFS_MAGIC); got != "tmpfs" {
		t.Errorf("fsName(TMPFS_MAGIC) = %q", got)
	}
	if got := fsName(0x1234); got != "0x1234" {
		t.Errorf("fsName(0x1234) = %q", got)
	}
}
