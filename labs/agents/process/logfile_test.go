package process

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

// TestAttackerCannotReadAPodsLog plays finding 4 of the hardening issue
// for the processes' logs: a pod's server log (what it printed, the
// requests it saw), written by a root svclab into a directory other users
// can enter, is unreadable to nobody, and so is its pid file.
func TestAttackerCannotReadAPodsLog(t *testing.T) {
	roottest.Require(t, "starts a process in a network namespace and acts as nobody")
	ns := roottest.Netns(t, "svclab-logtest")
	base, err := os.MkdirTemp("", "svclab-logtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil { // like /run
		t.Fatal(err)
	}
	logFile, pidFile := filepath.Join(base, "logs", "web-0.log"), filepath.Join(base, "run", "web-0.pid")
	if _, err := Start(Spec{Namespace: ns, Args: []string{"echo", "GET /admin?token=s3cret"}, LogFile: logFile, PIDFile: pidFile}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{logFile, pidFile} {
		out, err := roottest.AsNobody(t, exec.Command("cat", f)).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Permission denied") {
			t.Errorf("nobody's cat %s: %v, %s; want Permission denied", f, err, out)
		}
	}
}
