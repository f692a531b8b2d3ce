package roottest

import (
	"runtime"
	"syscall"
	"testing"
)

// InPrivateMountNamespace runs fn on an OS thread of its own that first
// leaves the host's mount namespace for a private copy (unshare -m, with /
// made rprivate): what fn mounts there no one else sees, and it all goes
// when the thread ends (it is never handed back to the Go scheduler). fn
// runs on another goroutine: it returns an error instead of calling
// t.Fatal.
func InPrivateMountNamespace(t testing.TB, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with its namespace
		if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
			done <- err
			return
		}
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			done <- err
			return
		}
		done <- fn()
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
