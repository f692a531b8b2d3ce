package cache

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// rootOwned checks that path is a folder only root can change: what
// exists of it (symbolic links followed) and every folder above it is
// owned by uid 0 and writable by no group and no other user. The folders
// still missing below are root's when svclab makes them.
func rootOwned(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s is not an absolute path", path)
	}
	existing := filepath.Clean(path)
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return err
	}
	for dir := real; ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(dir)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no owner to check", dir)
		}
		if st.Uid != 0 {
			return fmt.Errorf("%s is owned by uid %d", dir, st.Uid)
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("%s is writable by others (%s)", dir, fi.Mode().Perm())
		}
		if parent := filepath.Dir(dir); parent == dir {
			return nil
		}
	}
}

// noticeTo gets the notice of an ignored cache variable, once per process.
var (
	noticeTo   io.Writer = os.Stderr
	noticeMu   sync.Mutex
	noticeSaid = map[string]bool{}
)

func say(notice string) {
	noticeMu.Lock()
	defer noticeMu.Unlock()
	if noticeSaid[notice] {
		return
	}
	noticeSaid[notice] = true
	fmt.Fprintln(noticeTo, notice)
}
