package dockerhost

import (
	"os"
	"path/filepath"
	"syscall"
)

// usersPath is flock'ed shared by every svclab process that uses svclab's
// dockerd (a build, a create, a delete), from Ensure or Running until
// Release or Done: Release stops the daemon only when it can take the lock
// exclusively, that is when no other svclab process is using it.
var usersPath = filepath.Join(RunDir, "docker.users")

func acquireUse() *os.File {
	if err := makeRunDir(RunDir); err != nil {
		return nil
	}
	f, err := os.OpenFile(usersPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_SH) != nil {
		f.Close()
		return nil
	}
	return f
}

// othersUse reports whether another process holds the users lock (call it
// after dropping one's own).
func othersUse() bool {
	f, err := os.OpenFile(usersPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// Done says this process no longer uses the daemon, without stopping it.
func (d *Daemon) Done() {
	if d != nil && d.use != nil {
		d.use.Close()
		d.use = nil
	}
}
