package workshop

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/network"
)

// TestIntegrationWorkshopCommands walks the example lesson as a student
// does, through the svclab binary: start, next, back, check (exit 1 naming
// the item, not the answer; --verbose with it), hints one at a time, the solution, check (exit 0), progress as JSON and HTML, class,
// reset — and nothing of the lab or the state is left.
func TestIntegrationWorkshopCommands(t *testing.T) {
	roottest.Require(t, "builds the example lesson's lab from network namespaces")
	bin := roottest.SharedBinary(t)
	state := filepath.Join(t.TempDir(), "workshop")
	lessons := lessonsDir(t)
	lessonDir := filepath.Join(lessons, "example-clusterip")
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = lessonDir
		cmd.Env = append(os.Environ(), "SVCLAB_WORKSHOP_DIR="+state)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return out.String(), exit.ExitCode()
		case err != nil:
			t.Fatalf("svclab %v: %v", args, err)
		}
		return out.String(), 0
	}
	must := func(want int, args ...string) string {
		t.Helper()
		out, code := run(args...)
		if code != want {
			t.Fatalf("svclab %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, out)
		}
		return out
	}
	t.Cleanup(func() { run("workshop", "reset") })

	out := must(0, "workshop", "start", "example-clusterip", "--student", "alice", "--lessons", lessons)
	mustContain(t, out, "Step 1/3 · deploy", "web-a created", "✓ the output shows what the lesson says")
	mustContain(t, must(1, "workshop", "start", "example-clusterip", "--lessons", lessons), "is in progress")
	mustContain(t, must(0, "workshop", "next"), "Step 2/3 · chains", "-A KUBE-SVC-")
	mustContain(t, must(0, "workshop", "back"), "(as shown before)", "Step 1/3 · deploy")
	mustContain(t, must(0, "workshop", "next"), "(as shown before)", "Step 2/3 · chains")
	mustContain(t, must(0, "workshop", "next"), "Step 3/3 · split", "PASS at alpha")
	mustContain(t, must(0, "workshop", "next"), "That was the last step", "three-pods")

	// A failed check names the item and why, never the expression it
	// wanted (`-A KUBE-SVC-… .*--probability 0\.333`: the answer);
	// --verbose, for the teacher, shows it; hints come one at a time.
	out = must(1, "workshop", "check", "three-pods")
	mustContain(t, out, "✗ three-pods: not yet (check item 1 of 2 failed)", "why: the KUBE-SVC chain has no 1/3 rule yet", "svclab workshop hint three-pods")
	for _, part := range []string{`0\.333`, "0.333", "wanted", ".*--probability"} {
		if strings.Contains(out, part) {
			t.Errorf("a failed check shows %q, part of the expression it wanted:\n%s", part, out)
		}
	}
	mustContain(t, must(1, "workshop", "check", "three-pods", "--verbose"), `wanted: the output does not show /-A KUBE-SVC-`, `.*--probability 0\.333/`)
	mustContain(t, must(0, "workshop", "hint"), "hint 1 of 2 for three-pods: Copy web-b's Pod", "svclab workshop hint three-pods gives the next one")
	mustContain(t, must(0, "workshop", "hint", "three-pods"), "hint 2 of 2 for three-pods: The ladder for three endpoints")
	mustContain(t, must(0, "workshop", "hint", "three-pods"), "hint 2 of 2", "that was the last hint")
	mustContain(t, must(1, "workshop", "check", "nosuch"), `no exercise "nosuch"`)
	must(0, "apply", "--lab", "example-clusterip", "-f", "solutions/web-c.yaml")
	mustContain(t, must(0, "workshop", "check"), "✓ three-pods: passed")

	var rep Report
	if err := json.Unmarshal([]byte(must(0, "workshop", "progress", "-o", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Student != "alice" || rep.StepsDone != 3 || rep.Passed != 1 || rep.Exercises[0].Attempts != 3 {
		t.Errorf("progress: %+v; want alice, 3 steps, 1 passed at the 3rd attempt", rep)
	}
	html := must(0, "workshop", "progress", "-o", "html")
	mustContain(t, html, "<svg", "node1", "client", "web-c", "✓ passed")
	checkSelfContained(t, html)

	reportFile := filepath.Join(t.TempDir(), "alice.json")
	if err := os.WriteFile(reportFile, []byte(must(0, "workshop", "progress", "-o", "json")), 0o644); err != nil {
		t.Fatal(err)
	}
	mustContain(t, must(0, "workshop", "class", reportFile), "alice", "✓ 3")

	mustContain(t, must(0, "workshop", "reset"), "lab example-clusterip deleted")
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the workshop's state %s is left after reset", state)
	}
	if names, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(names), network.NamespaceName("example-clusterip", "")) {
		t.Errorf("namespaces of the lab are left after reset:\n%s", names)
	}
	mustContain(t, must(1, "workshop", "next"), "no lesson in progress")
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
