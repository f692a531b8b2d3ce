package kind

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"testing"
)

// TestRunStepsAnnouncesEachStep: piped, every step that applies is a
// start line and an end line (✓, or ✗ for the one that fails), what a
// step prints comes between them, and a step that does not apply (the
// upstream Calico steps on another CNI) is neither run nor shown.
func TestRunStepsAnnouncesEachStep(t *testing.T) {
	var out bytes.Buffer
	cr := &creation{out: &out, s: Settings{CNI: "flannel-vxlan"}}
	ran := false
	err := runSteps(cr, []createStep{
		{name: "read the cluster config", run: func(cr *creation) error { fmt.Fprintln(cr.out, "read x.yaml"); return nil }},
		{name: "fetch upstream Calico's manifest", run: func(*creation) error { ran = true; return nil }, applies: upstreamCalicoOnly},
		{name: "start Docker", run: func(*creation) error { return errors.New("no dockerd") }},
	})
	if err == nil || err.Error() != "creating a cluster: step 3/3, start Docker: no dockerd" {
		t.Fatalf("runSteps: %v", err)
	}
	if ran {
		t.Error("a step for --cni calico ran on flannel-vxlan")
	}
	want := regexp.MustCompile(`^ • read the cluster config \.\.\.
read x\.yaml
 ✓ read the cluster config \([0-9.µm]+s\)
 • start Docker \.\.\.
 ✗ start Docker \([0-9.µm]+s\)
$`)
	if !want.MatchString(out.String()) {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
