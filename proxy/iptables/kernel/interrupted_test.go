package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIPTablesRunsAgainWhenTheTableReadWasInterrupted: an iptables that
// fails twice as iptables-legacy did in the VM ("can't initialize iptables
// table `nat': Interrupted system call", status 3) and then succeeds is
// run three times and the call succeeds; one that fails otherwise is run
// once.
func TestIPTablesRunsAgainWhenTheTableReadWasInterrupted(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	interrupted := filepath.Join(dir, "interrupted")
	if err := os.WriteFile(interrupted, []byte("iptables v1.8.9 (legacy): can't initialize iptables table `nat': Interrupted system call\n"+
		"Perhaps iptables or your kernel needs to be upgraded.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`#!/bin/sh
case "$*" in *--version*) echo 'iptables v1.8.9 (legacy)'; exit 0;; esac
echo "$*" >>%[1]s
case "$*" in *BROKEN*) echo "iptables v1.8.9 (legacy): Chain 'BROKEN' does not exist" >&2; exit 1;; esac
if [ $(wc -l <%[1]s) -le 2 ]; then
	cat %[2]s >&2
	exit 3
fi
`, runs, interrupted)
	for _, name := range []string{"iptables-legacy", "iptables-legacy-save", "iptables-legacy-restore"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	r, err := NewExecRunner(ExecOptions{Backend: BackendLegacy})
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		data, err := os.ReadFile(runs)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Count(string(data), "\n")
	}

	if _, err := r.iptables("-t", "nat", "-N", "KUBE-SERVICES"); err != nil {
		t.Fatalf("-N after two interrupted table reads: %v", err)
	}
	if n := count(); n != 3 {
		t.Errorf("iptables ran %d times, want 3 (two interrupted, then the one that worked)", n)
	}

	if _, err := r.iptables("-t", "nat", "-S", "BROKEN"); err == nil {
		t.Fatal("-S of a missing chain succeeded, want its error")
	}
	if n := count(); n != 4 {
		t.Errorf("a failure of another kind ran iptables %d times in all, want 4 (once more)", n)
	}
}
