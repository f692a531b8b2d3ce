// Package privdir makes and checks the directories where svclab, running
// as root, keeps what other users of the machine must neither read nor
// plant (the VM's run directories under /run/svclab/vm): a path under such
// a directory names what svclab made, never a symbolic link or a file
// another user put there first.
//
// Ensure walks the path from / down, with Lstat (a symbolic link is never
// followed): every directory above the last must be owned by root or by
// the caller and writable by no one else, unless sticky (/tmp: others may
// add entries there but not replace the caller's); the last is made with
// Mkdir (mode 0700) when missing, and must then be a directory owned by the
// caller. A last directory of the caller's with a looser mode is repaired
// to 0700; anything else is refused with an error naming the path and what
// is wrong. CLI equivalent: install -d -m 0700 -o root DIR, plus the checks.
package privdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Ensure makes dir (0700) and its missing parents (0755) and checks them
// as the package doc says. dir must be absolute.
func Ensure(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("private directory %q: not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	parts := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	path := "/"
	if err := checkParent(path); err != nil {
		return err
	}
	for i, part := range parts {
		if part == "" {
			continue
		}
		path = filepath.Join(path, part)
		last := i == len(parts)-1
		mode := os.FileMode(0o755)
		if last {
			mode = 0o700
		}
		if err := os.Mkdir(path, mode); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("private directory %s: %w", dir, err)
		}
		if !last {
			if err := checkParent(path); err != nil {
				return err
			}
			continue
		}
		if err := checkLast(path); err != nil {
			return err
		}
	}
	return nil
}

// checkParent accepts a directory above the private one: a real directory
// owned by root or the caller, writable only by its owner unless sticky.
func checkParent(path string) error {
	fi, st, err := lstat(path)
	if err != nil {
		return err
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s: owned by uid %d (want root or uid %d): another user could replace what lies below it", path, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("%s: mode %v is writable by group or others without the sticky bit: another user could replace what lies below it", path, fi.Mode())
	}
	return nil
}

// checkLast accepts the private directory itself: a real directory owned by
// the caller; a mode other than 0700 is repaired.
func checkLast(path string) error {
	fi, st, err := lstat(path)
	if err != nil {
		return err
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s: owned by uid %d, not by uid %d: someone else made it first; remove it (as root) and run again", path, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm() != 0o700 || fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		// Ours and not a symlink, in a parent others cannot rename in:
		// Chmod reaches this very directory.
		if err := os.Chmod(path, 0o700); err != nil {
			return fmt.Errorf("%s: mode %v, want 0700: %w", path, fi.Mode(), err)
		}
	}
	return nil
}

// lstat returns path's own status (a symlink is not followed) and refuses
// anything but a directory.
func lstat(path string) (fs.FileInfo, *syscall.Stat_t, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("private directory: %w", err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, nil, fmt.Errorf("%s: a symbolic link, not a directory: refusing to follow it (someone may have planted it; remove it as root)", path)
	case !fi.IsDir():
		return nil, nil, fmt.Errorf("%s: a %v, not a directory", path, fi.Mode().Type())
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, nil, fmt.Errorf("%s: no owner in its status", path)
	}
	return fi, st, nil
}
