package labstore

import (
	"os"
	"syscall"
)

// A lab's state is root's alone: ConfigMaps, pod logs, traces and the
// journal say what runs and what the students typed. WriteFile makes
// directories 0700 and files 0600; the state an older svclab left
// world-readable (0755 directories, 0644 files) is tightened when it is
// opened: the lab's directory (one that holds lab.yaml) and the default
// state root become 0700, so nothing below them can be reached by others.
// Only root's own directories are touched, never a symbolic link, and
// never a sticky one (a shared /tmp named as a state root).

// tightenLabDir makes dir 0700 when it is a lab's state directory.
func tightenLabDir(dir string) {
	if fi, err := os.Lstat(dir + "/lab.yaml"); err != nil || !fi.Mode().IsRegular() {
		return
	}
	tightenDir(dir)
}

// tightenDir makes dir 0700 when root owns it and others may enter it.
func tightenDir(dir string) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode()&os.ModeSticky != 0 || fi.Mode().Perm()&0o077 == 0 {
		return
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 0 {
		return
	}
	os.Chmod(dir, 0o700) //nolint:errcheck // best effort: the directory stays as it was
}
