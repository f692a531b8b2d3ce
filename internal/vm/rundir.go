package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svclab/svclab/internal/privdir"
)

// runDirPrefix names the temporary directory of each run in runRoot().
const runDirPrefix = "svclab-vm-"

// runRoot is the directory of the runs' directories. For root it is
// /run/svclab/vm and never under TMPDIR: a run's files (its lock, the
// script the guest runs as root) must not sit where another user can plant
// a symbolic link first. Others use $XDG_RUNTIME_DIR/svclab-vm, else
// TMPDIR/svclab-vm-runs-UID. Tests replace it.
var runRoot = func() string {
	if os.Geteuid() == 0 {
		return "/run/svclab/vm"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, "svclab-vm")
	}
	return filepath.Join(os.TempDir(), "svclab-vm-runs-"+strconv.Itoa(os.Geteuid()))
}

// newRunDir makes a run's temporary directory in runRoot(), which it makes
// or checks first (owned by the caller, mode 0700, no symbolic link on the
// way: see privdir), after sweeping the stale ones.
func newRunDir() (string, error) {
	root := runRoot()
	if err := privdir.Ensure(root); err != nil {
		return "", fmt.Errorf("vm: the runs' directory: %w", err)
	}
	sweepStale(root)
	return os.MkdirTemp(root, runDirPrefix)
}

// sweepStale removes from root the directories of runs that died without
// cleaning up (killed with SIGKILL; their qemu died with them): older than
// a minute and not locked by a live run; without a lock file (a run that
// died at its start), older than an hour. It follows no symbolic link and
// removes only directories owned by the caller (os.RemoveAll unlinks the
// links inside without following them); a lock that is not a regular file
// of the caller's is never opened (flock refuses it) and keeps its
// directory.
func sweepStale(root string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), runDirPrefix) {
			continue
		}
		d := filepath.Join(root, e.Name())
		info, err := os.Lstat(d)
		if err != nil || !info.IsDir() || !ownedByMe(info) || time.Since(info.ModTime()) < time.Minute {
			continue
		}
		lock := filepath.Join(d, "lock")
		l, free := tryLockFile(lock)
		if !free {
			if _, err := os.Lstat(lock); err == nil || time.Since(info.ModTime()) < time.Hour {
				continue // a live run, or a lock that is not ours
			}
		}
		os.RemoveAll(d)
		l.Unlock()
	}
}

// ownedByMe reports whether the effective uid owns the file.
func ownedByMe(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
