package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

// TestIntegrationFirstRunWithoutRoot is a new user's first try without
// sudo: `svclab create lab` says in one line that it needs root and exits
// 1 before it touches anything; `svclab` alone shows the first steps and
// `svclab version` works without root.
func TestIntegrationFirstRunWithoutRoot(t *testing.T) {
	roottest.Require(t, "runs svclab as the user nobody")
	// The shared binary's folder is root's (0700): nobody runs a copy.
	bin := filepath.Join(roottest.SharedTmp(t), "svclab")
	data, err := os.ReadFile(roottest.SharedBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func(args ...string) (string, int) {
		t.Helper()
		cmd := roottest.AsNobody(t, exec.Command(bin, args...))
		cmd.Dir = filepath.Dir(bin)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		if err != nil {
			t.Fatalf("svclab %v: %v", args, err)
		}
		return string(out), 0
	}

	out, code := asNobody("create", "lab", "--config", "clusters/single-node.yaml")
	if code != 1 || strings.TrimSpace(out) != "error: svclab create lab needs root: run it with sudo" {
		t.Errorf("create lab as nobody (exit %d, want 1 and one line):\n%s", code, out)
	}
	for _, args := range [][]string{{"apply", "-f", "x.yaml"}, {"exec", "node1", "--", "true"}, {"delete", "lab", "--name", "x"}, {"workshop", "start", "seed-001-ladder"}} {
		want := "svclab " + strings.Join(args[:min(2, len(args))], " ")
		if args[0] == "apply" || args[0] == "exec" {
			want = "svclab " + args[0]
		}
		if out, code := asNobody(args...); code != 1 || !strings.Contains(out, want+" needs root: run it with sudo") {
			t.Errorf("svclab %v as nobody (exit %d): %s", args, code, out)
		}
	}
	if out, code := asNobody("create", "lab", "--help"); code != 0 || !strings.Contains(out, "Examples:") {
		t.Errorf("create lab --help as nobody (exit %d): help, with examples, and no root needed:\n%s", code, out)
	}
	out, code = asNobody()
	if code != 0 || !strings.HasPrefix(out, "Start here:") || !strings.Contains(out, "sudo svclab create lab --config") ||
		!strings.Contains(out, "sudo svclab tour nodeport") || !strings.Contains(out, "Available Commands:") {
		t.Errorf("svclab with no arguments (exit %d): the first steps, then the help:\n%s", code, out)
	}
	if out, code = asNobody("version"); code != 0 || !strings.Contains(out, "Kubernetes: v1.36.4") {
		t.Errorf("version as nobody (exit %d), want the Kubernetes version svclab's proxy and clusters follow, v1.36.4:\n%s", code, out)
	}
}

// TestRootHelpHidesInternalCommands: the commands svclab runs itself
// (pods' servers, node proxies, supervisors) are not in the root help.
func TestRootHelpHidesInternalCommands(t *testing.T) {
	svclab := svclabRunner(t, roottest.SharedBinary(t))
	out, code := svclab("--help")
	if code != 0 {
		t.Fatalf("svclab --help (exit %d):\n%s", code, out)
	}
	_, commands, _ := strings.Cut(out, "Available Commands:")
	commands, _, _ = strings.Cut(commands, "Flags:")
	for _, internal := range []string{"netexec", "proxy", "supervise", "node", "cni", "dns", "loadbalancer"} {
		for _, line := range strings.Split(commands, "\n") {
			if fields := strings.Fields(line); len(fields) > 0 && fields[0] == internal {
				t.Errorf("root help lists the internal command %s:\n%s", internal, commands)
			}
		}
	}
	for _, user := range []string{"create", "apply", "workshop", "tour", "trace"} {
		if !strings.Contains(commands, "\n  "+user+" ") {
			t.Errorf("root help lacks %s:\n%s", user, commands)
		}
	}
}
