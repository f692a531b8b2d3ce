package process

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// WaitGone waits until none of pids runs (exited, a zombie or never
// there), at most timeout, and reports whether they are gone. It waits for
// the kernel's word, not a clock: a pidfd of each process becomes readable
// when it exits, whosever child it is. Where the kernel has no pidfds
// (before Linux 5.3) it looks every 10 ms instead.
func WaitGone(pids []int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	var fds []unix.PollFd
	defer func() {
		for _, p := range fds {
			unix.Close(int(p.Fd))
		}
	}()
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		switch {
		case errors.Is(err, unix.ESRCH):
			continue // gone already
		case err != nil:
			return pollGone(pids, deadline)
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	for {
		pending := fds[:0]
		for _, p := range fds {
			if p.Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) == 0 {
				pending = append(pending, p)
			} else {
				unix.Close(int(p.Fd))
			}
		}
		fds = pending
		if len(fds) == 0 {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		if _, err := unix.Poll(fds, int(left.Milliseconds())+1); err != nil && !errors.Is(err, unix.EINTR) {
			return pollGone(pids, deadline)
		}
	}
}

// pollGone is WaitGone by looking at /proc every 10 ms.
func pollGone(pids []int, deadline time.Time) bool {
	for anyAlive(pids) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
