package vm

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// fileLock is an flock(2) on a file: exclusive for the one who builds or
// deletes, shared for the runs that use a build (CLI: flock FILE).
type fileLock struct{ f *os.File }

// lockFile takes the lock on path (created if missing), waiting until it is
// free or ctx is done.
func lockFile(ctx context.Context, path string, exclusive bool) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return &fileLock{f}, nil
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("flock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tryLockFile takes the exclusive lock on path only if it is free now.
func tryLockFile(path string) (*fileLock, bool) {
	f, err := os.OpenFile(path, os.O_RDWR, 0o644)
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return &fileLock{f}, true
}

func (l *fileLock) Unlock() {
	if l != nil && l.f != nil {
		l.f.Close() // closing drops the flock
		l.f = nil
	}
}
