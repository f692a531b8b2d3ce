package kind

import "fmt"

// createStep is one named step of Create, as kind's own create is a list
// of actions: it runs on the creation the steps share.
type createStep struct {
	name string
	run  func(*creation) error
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

// runSteps runs steps in order. The first that fails stops them: the
// undos the steps before it added run, last first, and the error names
// the step.
func runSteps(cr *creation, steps []createStep) error {
	for i, st := range steps {
		if err := st.run(cr); err != nil {
			for j := len(cr.undo) - 1; j >= 0; j-- {
				cr.undo[j](err)
			}
			cr.undo = nil
			return &stepError{cluster: cr.name(), step: st.name, index: i, total: len(steps), err: err}
		}
	}
	return nil
}
