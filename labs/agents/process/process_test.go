package process

import (
	"path/filepath"
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
	// ip netns exec, then sleep: 30 s bounds it on a loaded host.
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if pids := InNamespaces([]string{ns}); len(pids) == 1 && pids[0] == pid {
			break
		}
	}
	if pids := InNamespaces([]string{ns}); len(pids) != 1 || pids[0] != pid {
		t.Fatalf("processes in %s: %v, want [%d]", ns, pids, pid)
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
