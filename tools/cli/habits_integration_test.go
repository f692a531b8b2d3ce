package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkKubectlHabits is issue 26's kubectl reflexes on a running lab,
// through the binary: apply -f - (stdin) and -f DIR, get lab(s) -o json
// and -o jsonpath on svclab's own Lab objects, and get's templates on
// the lab's objects.
func checkKubectlHabits(t *testing.T, bin, lab string, svclab func(args ...string) (string, int)) {
	t.Helper()
	applyStdin := func(manifest string) (string, int) {
		cmd := exec.Command(bin, "apply", "--lab", lab, "-f", "-")
		cmd.Stdin = strings.NewReader(manifest)
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); ok {
			return string(out), exit.ExitCode()
		}
		if err != nil {
			t.Fatalf("apply -f -: %v", err)
		}
		return string(out), 0
	}
	if out, code := applyStdin("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-stdin\ndata:\n  a: b\n"); code != 0 {
		t.Errorf("apply -f - (exit %d):\n%s", code, out)
	}
	if out, code := svclab("get", "cm", "from-stdin", "--lab", lab, "-o", "jsonpath={.data.a}"); code != 0 || out != "b" {
		t.Errorf("get cm from-stdin -o jsonpath={.data.a} (exit %d): %q, want b", code, out)
	}
	if out, code := applyStdin("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"); code == 0 || !strings.Contains(out, "manifest STDIN: document 1") {
		t.Errorf("apply -f - of a Secret (exit %d): want an error naming STDIN:\n%s", code, out)
	}

	dir := t.TempDir()
	for name, content := range map[string]string{
		"b.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dir-b\n",
		"a.json":    `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dir-a"}}`,
		"notes.txt": "not a manifest: -f DIR reads .json, .yaml and .yml files only",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, code := svclab("apply", "--lab", lab, "-f", dir); code != 0 {
		t.Errorf("apply -f DIR (exit %d):\n%s", code, out)
	}
	out, code := svclab("get", "cm", "dir-a", "dir-b", "--lab", lab, "-o", "custom-columns=NAME:.metadata.name,KIND:kind", "--no-headers")
	if code != 0 || strings.Fields(out)[0] != "dir-a" || len(strings.Fields(out)) != 4 {
		t.Errorf("get cm dir-a dir-b -o custom-columns --no-headers (exit %d):\n%s", code, out)
	}

	out, code = svclab("get", "labs", "-o", "json")
	var list struct {
		APIVersion, Kind string
		Items            []struct {
			APIVersion, Kind string
			Metadata         struct{ Name string }
			Status           struct {
				Nodes []string
				Pods  int
				State string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || list.Kind != "List" {
		t.Fatalf("get labs -o json (exit %d, %v): want a List:\n%s", code, err, out)
	}
	found := false
	for _, it := range list.Items {
		if it.Metadata.Name == lab {
			found = true
			if it.APIVersion != "svclab.dev/v1alpha1" || it.Kind != "Lab" || it.Status.State != "running" || len(it.Status.Nodes) != 1 || it.Status.Pods < 3 {
				t.Errorf("get labs -o json: lab %s is not a running svclab.dev/v1alpha1 Lab with a node and nginx's pods: %+v", lab, it)
			}
		}
	}
	if !found {
		t.Errorf("get labs -o json lacks %s:\n%s", lab, out)
	}
	if out, code := svclab("get", "lab", lab, "-o", "jsonpath={.kind}/{.metadata.name}: {.status.state}"); code != 0 || out != "Lab/"+lab+": running" {
		t.Errorf("get lab %s -o jsonpath (exit %d): %q", lab, code, out)
	}
	if out, code := svclab("get", "lab", lab, "nope-"+lab, "-o", "name"); code == 0 || !strings.Contains(out, "lab.svclab.dev/"+lab+"\n") || !strings.Contains(out, `labs "nope-`+lab+`" not found`) {
		t.Errorf("get lab %s nope-%s -o name (exit %d): want the one found, then kubectl's not found:\n%s", lab, lab, code, out)
	}
}
