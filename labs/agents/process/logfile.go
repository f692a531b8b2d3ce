package process

import (
	"os"
	"path/filepath"
)

// OpenLog opens a process's log for appending, readable by root only: a
// pod's log is lab state (what the server printed, the requests it saw),
// as private as the rest of it (0600, its directory 0700). A log an older
// svclab made 0644 is tightened.
func OpenLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
