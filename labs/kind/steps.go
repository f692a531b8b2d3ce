package kind

import (
	"fmt"

	"github.com/svclab/svclab/internal/status"
)

// createStep is one named step of Create, as kind's own create is a list
// of actions: it runs on the creation the steps share.
type createStep struct {
	name string
	run  func(*creation) error
	// applies, when set, says whether the step is this cluster's (the
	// upstream Calico steps for --cni calico only); a step that does not
	// apply is neither run nor announced.
	applies func(*creation) bool
}

// stepError says which step of creating a cluster failed.
type stepError struct {
	cluster string // "" before the name is settled
	step    string
	index   int // 0-based
	total   int
	err     error
}

func (e *stepError) Error() string {
	what := "creating a cluster"
	if e.cluster != "" {
		what = "creating cluster " + e.cluster
	}
	return fmt.Sprintf("%s: step %d/%d, %s: %v", what, e.index+1, e.total, e.step, e.err)
}

func (e *stepError) Unwrap() error { return e.err }

// runSteps runs steps in order, each announced on cr.out as it starts and
// marked as it ends (internal/status: a spinner with its time running on
// a terminal, plain lines when piped; what a step prints goes through it).
// The first that fails stops them: the undos the steps before it added
// run, last first, and the error names the step.
func runSteps(cr *creation, steps []createStep) error {
	progress := status.New(cr.out)
	cr.out = progress
	for i, st := range steps {
		if st.applies != nil && !st.applies(cr) {
			continue
		}
		announced := progress.Start(st.name)
		if err := st.run(cr); err != nil {
			announced.Fail()
			for j := len(cr.undo) - 1; j >= 0; j-- {
				cr.undo[j](err)
			}
			cr.undo = nil
			return &stepError{cluster: cr.name(), step: st.name, index: i, total: len(steps), err: err}
		}
		announced.Done("")
	}
	return nil
}
