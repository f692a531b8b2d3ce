// Package flock is svclab's one file lock: flock(2) on a file, exclusive
// for whoever builds or changes a thing, shared for those who only use it
// (CLI: flock FILE). A lock dies with its process, so a crash never leaves
// one held.
//
// svclab runs as root, often in directories other users can write: a lock
// file is opened only when it is a regular file of the caller's. A
// symbolic link, a FIFO or a device in the lock's place (a local user's
// `ln -s /dev/watchdog …/lock`) is refused without being opened: the path
// is checked with Lstat, opened with O_NOFOLLOW (and O_NONBLOCK, O_NOCTTY,
// O_CLOEXEC), and the opened file checked again with fstat (a regular file
// owned by the effective uid, the one Lstat saw).
package flock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Lock is a held flock.
type Lock struct{ f *os.File }

// Acquire takes the lock on path (made, with its directory, if missing),
// waiting until it is free or ctx is done.
func Acquire(ctx context.Context, path string, exclusive bool) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := openOwn(path, os.O_CREATE)
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
			return &Lock{f}, nil
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

// TryAcquire takes the exclusive lock on an existing path only if it is
// free now.
func TryAcquire(path string) (*Lock, bool) {
	f, err := openOwn(path, 0)
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return &Lock{f}, true
}

// Unlock releases the lock; it may be called more than once.
func (l *Lock) Unlock() {
	if l != nil && l.f != nil {
		l.f.Close() // closing drops the flock
		l.f = nil
	}
}

// Unlinked reports whether path no longer names the locked file: someone
// removed it (or put another file in its place) while this lock waited. Such
// a lock excludes nobody who opens path now, so a caller that removes its
// lock file when done (while holding it) has its waiters check Unlinked and
// acquire again.
func (l *Lock) Unlinked(path string) bool {
	if l == nil || l.f == nil {
		return true
	}
	held, err := l.f.Stat()
	if err != nil {
		return true
	}
	now, err := os.Lstat(path)
	return err != nil || !os.SameFile(held, now)
}
