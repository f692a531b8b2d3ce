package process

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
)

func TestIntegrationStartFindStop(t *testing.T) {
	roottest.Require(t, "creates a network namespace")
	ns := roottest.Netns(t, "svclab-processtest")
	dir := t.TempDir()
	pid, err := Start(Spec{Namespace: ns, Args: []string{"sleep", "60"}, LogFile: filepath.Join(dir, "log"), PIDFile: filepath.Join(dir, "pid")})
	if err != nil {
		t.Fatal(err)
	}
	// Forked from a thread in the namespace, the process is in it from its
	// first instruction: no wait.
	if pids := InNamespaces([]string{ns}); len(pids) != 1 || pids[0] != pid {
		t.Fatalf("processes in %s: %v, want [%d]", ns, pids, pid)
	}
	// It shares the caller's mount namespace: none of its own for the
	// host's netns mounts to be copied into (Start).
	if own, its := namespaceLink(t, "self", "mnt"), namespaceLink(t, strconv.Itoa(pid), "mnt"); own != its {
		t.Errorf("mount namespace of pid %d is %s, want the caller's %s", pid, its, own)
	}
	if !Alive(pid) {
		t.Fatalf("pid %d not alive", pid)
	}
	if n := StopInNamespaces([]string{ns}, time.Second); n != 1 {
		t.Errorf("stopped %d processes, want 1", n)
	}
	if Alive(pid) {
		t.Errorf("pid %d still alive after stop", pid)
	}
	if pids := InNamespaces([]string{"svclab-no-such-namespace"}); len(pids) != 0 {
		t.Errorf("a missing namespace has processes %v", pids)
	}
}

// namespaceLink is the namespace of kind (net, mnt) of /proc/<pid> ("self"), as
// its link reads ("mnt:[4026531841]").
func namespaceLink(t *testing.T, pid, kind string) string {
	t.Helper()
	id, err := os.Readlink(filepath.Join("/proc", pid, "ns", kind))
	if err != nil {
		t.Fatal(err)
	}
	return id
}
