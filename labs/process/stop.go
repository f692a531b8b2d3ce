package process

import (
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

// StopInNamespaces ends every process in the named namespaces: SIGTERM, then
// SIGKILL for those still alive after grace. It returns how many it found.
func StopInNamespaces(names []string, grace time.Duration) int {
	pids := InNamespaces(names)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && anyAlive(pids) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, pid := range pids {
		if Alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end) && anyAlive(pids); {
		time.Sleep(10 * time.Millisecond)
	}
	return len(pids)
}

// StopPID ends one process the same way.
func StopPID(pid int, grace time.Duration) {
	if !Alive(pid) {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for end := time.Now().Add(grace); time.Now().Before(end) && Alive(pid); {
		time.Sleep(10 * time.Millisecond)
	}
	if Alive(pid) {
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
