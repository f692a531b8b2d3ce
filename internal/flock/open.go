package flock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openFlags never follow a symbolic link in the last component, never make
// a terminal the controlling one, never block on a FIFO and never leak the
// descriptor into a child.
const openFlags = os.O_RDWR | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC

// openOwn opens the lock file path (create: os.O_CREATE makes it, 0644,
// when missing) only if it is a regular file owned by the effective uid;
// anything else in its place is refused, unopened when Lstat sees it.
func openOwn(path string, create int) (*os.File, error) {
	before, err := os.Lstat(path)
	switch {
	case err == nil:
		if err := checkOwn(path, before); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist) && create != 0:
		before = nil
	default:
		return nil, err
	}
	f, err := os.OpenFile(path, openFlags|create, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("lock %s: a symbolic link: refusing to follow it", path)
		}
		return nil, err
	}
	after, err := f.Stat()
	if err == nil {
		err = checkOwn(path, after)
	}
	if err == nil && before != nil && !os.SameFile(before, after) {
		err = fmt.Errorf("lock %s: replaced while being opened", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOwn accepts a regular file owned by the effective uid.
func checkOwn(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		what := "not a regular file"
		if fi.Mode()&fs.ModeSymlink != 0 {
			what = "a symbolic link"
		}
		return fmt.Errorf("lock %s: %s (mode %v): refusing to open it", path, what, fi.Mode())
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("lock %s: no owner in its status", path)
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("lock %s: owned by uid %d, not by uid %d: refusing a file another user may have planted", path, st.Uid, os.Geteuid())
	}
	return nil
}
