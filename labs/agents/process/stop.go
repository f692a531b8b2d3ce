package process

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// nsID identifies a network namespace by device and inode, as stat(2) of
// /run/netns/<name> or /proc/<pid>/ns/net reports it.
type nsID struct{ dev, ino uint64 }

func statNS(path string) (nsID, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nsID{}, false
	}
	return nsID{uint64(st.Dev), st.Ino}, true
}

// InNamespaces returns the pids of every process whose network namespace is
// one of the named namespaces (names as in /run/netns).
func InNamespaces(names []string) []int {
	want := map[nsID]bool{}
	for _, n := range names {
		if id, ok := statNS(filepath.Join("/run/netns", n)); ok {
			want[id] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var pids []int
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if id, ok := statNS(filepath.Join("/proc", e.Name(), "ns", "net")); ok && want[id] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// StopInNamespaces ends every process in the named namespaces and returns
// how many it found. Parents go first: a supervisor (whose container is its
// child) gets SIGTERM, stops its container and exits, so it cannot restart
// a container killed under it; then whatever is left (an orphan, a
// supervisor's child after the supervisor was killed) is ended the same
// way, until the namespaces hold no process. Each round is SIGTERM, then
// SIGKILL for those still alive after grace.
func StopInNamespaces(names []string, grace time.Duration) int {
	found := map[int]bool{}
	for round := 0; round < 5; round++ {
		pids := InNamespaces(names)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			found[pid] = true
		}
		stopAll(roots(pids), grace)
	}
	return len(found)
}

// roots returns the pids whose parent is not one of pids.
func roots(pids []int) []int {
	in := map[int]bool{}
	for _, pid := range pids {
		in[pid] = true
	}
	var out []int
	for _, pid := range pids {
		if !in[parent(pid)] {
			out = append(out, pid)
		}
	}
	return out
}

// parent returns a process's parent pid (0 when it cannot be read).
func parent(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// "pid (comm) S ppid …": the fields after the last ')'.
	for i := len(data) - 1; i > 0; i-- {
		if data[i] == ')' {
			var state byte
			var ppid int
			if _, err := fmt.Sscanf(string(data[i+1:]), " %c %d", &state, &ppid); err != nil {
				return 0
			}
			return ppid
		}
	}
	return 0
}

// stopAll sends SIGTERM to pids, then SIGKILL to those alive after grace,
// and waits (a bounded time) until they are gone.
func stopAll(pids []int, grace time.Duration) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	if WaitGone(pids, grace) {
		return
	}
	for _, pid := range pids {
		if Alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	WaitGone(pids, 2*time.Second)
}

// StopPID ends one process the same way.
func StopPID(pid int, grace time.Duration) {
	if !Alive(pid) {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	if !WaitGone([]int{pid}, grace) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func anyAlive(pids []int) bool {
	for _, pid := range pids {
		if Alive(pid) {
			return true
		}
	}
	return false
}
