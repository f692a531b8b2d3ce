package cli_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/clusters"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/network"
)

// TestIntegrationOutsideTheCheckout is a new user's session with the
// binary alone, in an empty folder far from any checkout: the lessons,
// the lab file and the workloads are the ones built in. As nobody:
// `workshop list` and `get examples`; as root: `create lab --config
// single-node`, `apply -f -`, `apply -f workloads/nginx.yaml`, `get labs -o
// json`, `delete lab single-node`.
func TestIntegrationOutsideTheCheckout(t *testing.T) {
	roottest.Require(t, "builds a lab from network namespaces")
	const lab = "single-node" // the built-in lab file's name
	if ns, _ := network.Namespaces(lab); len(ns) > 0 {
		t.Skipf("a lab %s exists on this machine (namespaces %v): the built-in lab file makes one of that name", lab, ns)
	}
	// A copy of the binary in a folder of its own, run from an empty one:
	// nothing of the checkout is at or above either.
	shared := roottest.SharedTmp(t)
	bin := filepath.Join(shared, "svclab")
	data, err := os.ReadFile(roottest.SharedBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(shared, "work")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, asNobody bool, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = empty
		cmd.Stdin = strings.NewReader(stdin)
		if asNobody {
			roottest.AsNobody(t, cmd)
			cmd.Env = append(cmd.Env, "TMPDIR="+shared) // nobody has no home: its built-in files go there
		}
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
	svclab := func(args ...string) (string, int) { t.Helper(); return run("", false, args...) }

	lessons, _ := fs.Glob(clusters.FS, "lessons/*/lesson.yaml")
	out, code := run("", true, "workshop", "list")
	if code != 0 || !strings.HasPrefix(out, "NAME") || strings.Count(out, "\n") != len(lessons)+1 || !strings.Contains(out, "seed-001-ladder") {
		t.Fatalf("workshop list as nobody from an empty folder (exit %d): want the %d built-in lessons:\n%s", code, len(lessons), out)
	}
	if out, code := run("", true, "get", "examples"); code != 0 || !strings.Contains(out, "single-node") || !strings.Contains(out, "nginx") {
		t.Errorf("get examples as nobody (exit %d):\n%s", code, out)
	}
	if out, code := svclab("workshop", "list", "-o", "json"); code != 0 || !strings.Contains(out, `"name": "seed-004-nodeport"`) {
		t.Errorf("workshop list -o json as root (exit %d):\n%s", code, out)
	}

	// Every command names the lab: other packages' tests create labs of
	// their own meanwhile (tools/ui's did, and "--lab: required" failed
	// this test), so which lab is the only one cannot be assumed.
	t.Cleanup(func() { svclab("delete", "lab", lab) })
	out, code = svclab("create", "lab", "--config", lab)
	if code != 0 || !strings.Contains(out, "lab "+lab+" is up in") {
		t.Fatalf("create lab --config %s from an empty folder (exit %d):\n%s", lab, code, out)
	}
	if out, code := run("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-stdin\ndata:\n  a: b\n", false, "apply", "--lab", lab, "-f", "-"); code != 0 {
		t.Errorf("apply -f - (exit %d):\n%s", code, out)
	}
	if out, code := svclab("apply", "--lab", lab, "-f", "workloads/nginx.yaml"); code != 0 {
		t.Errorf("apply -f workloads/nginx.yaml, built in (exit %d):\n%s", code, out)
	}
	if out, code := svclab("get", "--lab", lab, "cm", "from-stdin", "-o", "jsonpath={.data.a}"); code != 0 || out != "b" {
		t.Errorf("get cm from-stdin -o jsonpath (exit %d): %q, want b", code, out)
	}
	if out, code := svclab("get", "--lab", lab, "svc", "nginx", "-o", "jsonpath={.spec.clusterIP}"); code != 0 || out != "10.96.0.11" {
		t.Errorf("get svc nginx (exit %d): %q, want the built-in workload's 10.96.0.11", code, out)
	}
	if out, code := svclab("apply", "--lab", lab, "-f", "workloads/no-such.yaml"); code == 0 || !strings.Contains(out, "nor a built-in workload") {
		t.Errorf("apply -f workloads/no-such.yaml (exit %d): want an error saying it is neither a file nor built in:\n%s", code, out)
	}

	out, code = svclab("get", "labs", "-o", "json")
	var list struct {
		Kind  string
		Items []struct {
			Kind     string
			Metadata struct{ Name string }
			Status   struct{ State string }
		}
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || list.Kind != "List" {
		t.Fatalf("get labs -o json (exit %d, %v):\n%s", code, err, out)
	}
	found := false
	for _, it := range list.Items {
		found = found || (it.Metadata.Name == lab && it.Kind == "Lab" && it.Status.State == "running")
	}
	if !found {
		t.Errorf("get labs -o json: no running Lab %s:\n%s", lab, out)
	}

	if out, code := svclab("delete", "lab", lab); code != 0 || out != "lab "+lab+" deleted\n" {
		t.Fatalf("delete lab %s (exit %d): %s", lab, code, out)
	}
	if ns, _ := network.Namespaces(lab); len(ns) != 0 {
		t.Errorf("delete left namespaces %v", ns)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("the session wrote into the working folder: %v", entries)
	}
}
