package roottest

import (
	"syscall"
	"testing"
	"unsafe"
)

// WatchOpens watches path with inotify and returns a function that
// counts the opens of it since (IN_OPEN: any process, any mode, a FIFO
// included, queued before open(2) returns, so nothing is missed once the
// opener's call is over; the kernel merges identical events in a row, so
// the count is a lower bound, and 0 means none). An attacker's test uses
// it to see whether root opened what the attacker planted.
func WatchOpens(t testing.TB, path string) (opens func() int) {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN); err != nil {
		t.Fatalf("inotify watch %s: %v", path, err)
	}
	n := 0
	return func() int {
		buf := make([]byte, 64<<10)
		for {
			r, err := syscall.Read(fd, buf)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || r <= 0 {
				return n
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= r; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				if ev.Mask&syscall.IN_OPEN != 0 {
					n++
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}
