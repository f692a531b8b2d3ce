package kind

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCreateSteps: Create's steps by name, in order. The checks that need
// no Docker come first (a bad config or a missing program fails before
// anything starts); kind creates the cluster before anything is put into
// it; the load balancer comes last.
func TestCreateSteps(t *testing.T) {
	var got []string
	for _, s := range createSteps() {
		if s.run == nil {
			t.Errorf("step %q does nothing", s.name)
		}
		got = append(got, s.name)
	}
	want := []string{
		"read the cluster config",
		"settle the name, CNI and proxy",
		"fetch upstream Calico's manifest",
		"find the svclab binary",
		"check the host's programs",
		"start Docker",
		"check Docker for upstream Calico",
		"track the host's sysctls",
		"check the name is free",
		"build the node image",
		"build svclab's images",
		"create the cluster with kind",
		"list the nodes",
		"load the images into the nodes",
		"install the pod network",
		"wait for the nodes and system pods",
		"set up the load balancer",
	}
	if !slices.Equal(got, want) {
		t.Errorf("steps:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestRunStepsUndoesAndNamesTheFailedStep: the steps after a failure do
// not run, the undos of the steps before it run last first with the
// cause, and the error names the step, its place and the cluster.
func TestRunStepsUndoesAndNamesTheFailedStep(t *testing.T) {
	var log []string
	cause := errors.New("no room")
	makes := func(what string) func(*creation) error {
		return func(cr *creation) error {
			log = append(log, "make "+what)
			cr.onFailure(func(err error) { log = append(log, fmt.Sprintf("undo %s (%v)", what, err)) })
			return nil
		}
	}
	cr := &creation{opts: CreateOptions{Name: "demo"}}
	err := runSteps(cr, []createStep{
		{name: "first", run: makes("a")},
		{name: "second", run: makes("b")},
		{name: "third", run: func(*creation) error { log = append(log, "fail"); return cause }},
		{name: "fourth", run: makes("c")},
	})
	if want := "creating cluster demo: step 3/4, third: no room"; err == nil || err.Error() != want {
		t.Errorf("error %v; want %q", err, want)
	}
	if !errors.Is(err, cause) {
		t.Errorf("the error does not wrap the step's: %v", err)
	}
	want := []string{"make a", "make b", "fail", "undo b (no room)", "undo a (no room)"}
	if !slices.Equal(log, want) {
		t.Errorf("ran %q; want %q", log, want)
	}
	log = nil
	if err := runSteps(&creation{}, []createStep{{name: "only", run: makes("d")}}); err != nil || !slices.Equal(log, []string{"make d"}) {
		t.Errorf("a run without failure: %v, ran %q; want no undo", err, log)
	}
}

// TestCreateNamesTheFailedStep: Create's error says which step failed,
// here ones that fail before Docker is touched.
func TestCreateNamesTheFailedStep(t *testing.T) {
	if _, err := Create(context.Background(), CreateOptions{}); err == nil ||
		err.Error() != "creating a cluster: step 1/17, read the cluster config: a kind v1alpha4 Cluster config is required" {
		t.Errorf("without a config: %v", err)
	}
	_, err := Create(context.Background(), CreateOptions{ConfigFile: "../../clusters/kind/flannel-vxlan.yaml", Name: "demo", SvclabBinary: "/nonexistent/svclab"})
	if err == nil || !strings.HasPrefix(err.Error(), "creating cluster demo: step 4/17, find the svclab binary: ") {
		t.Errorf("without the svclab binary: %v", err)
	}
}
