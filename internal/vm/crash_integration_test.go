package vm

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
)

// crashingQemu puts first on PATH a qemu-system-x86_64 that dies of SIGSEGV
// on its first `crashes` boots of a guest (the KVM probe passes through) and
// then runs the real qemu — what qemu 7.2 under TCG did once in CI.
func crashingQemu(t *testing.T, crashes int) {
	t.Helper()
	real, err := exec.LookPath(qemuBinary)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := `#!/bin/sh
case " $* " in *" -initrd "*)
	n=$(cat "` + dir + `/boots" 2>/dev/null || echo 0)
	echo $((n + 1)) >"` + dir + `/boots"
	[ "$n" -lt ` + strconv.Itoa(crashes) + ` ] && kill -SEGV $$
esac
exec "` + real + `" "$@"
`
	if err := os.WriteFile(filepath.Join(dir, qemuBinary), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// A qemu that crashes before the guest starts the command is booted again,
// and the run says so; the command runs once.
func TestIntegrationVMRunBootsAgainAfterQemuCrash(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	crashingQemu(t, 2)
	var log, stdout bytes.Buffer
	code, err := Run(context.Background(), Options{
		Command: []string{"sh", "-c", "echo ran"}, Stdout: &stdout, Log: &log, Timeout: 5 * time.Minute,
	})
	if err != nil || code != 0 || stdout.String() != "ran\n" {
		t.Fatalf("exit %d, err %v, stdout %q; want the command run once after two crashed boots\nlog:\n%s", code, err, stdout.String(), log.String())
	}
	for _, want := range []string{"died of segmentation fault before the guest started the command (boot 1 of 3)", "(boot 2 of 3)"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log does not say %q:\n%s", want, log.String())
		}
	}
}

// A qemu that keeps crashing is given up after qemuBoots boots, with the
// crash in the error.
func TestIntegrationVMRunGivesUpOnQemuThatKeepsCrashing(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	crashingQemu(t, qemuBoots)
	var log bytes.Buffer
	_, err := Run(context.Background(), Options{Command: []string{"true"}, Log: &log, Timeout: 5 * time.Minute})
	if err == nil || !strings.Contains(err.Error(), "qemu failed: signal: segmentation fault") {
		t.Fatalf("err %v; want qemu's segmentation fault after %d boots\nlog:\n%s", err, qemuBoots, log.String())
	}
	if n := strings.Count(log.String(), "booting again"); n != qemuBoots-1 {
		t.Errorf("booted again %d times, want %d:\n%s", n, qemuBoots-1, log.String())
	}
}
