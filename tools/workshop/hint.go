package workshop

import (
	"fmt"
	"io"
)

// Hint is one hint given by NextHint: the Nth (from 1) of Of.
type Hint struct {
	Exercise string
	N, Of    int
	Text     string
	// Again: every hint had been shown; this is the last one again.
	Again bool
}

// NextHint gives the exercise's next hint, one at a time, and records it in
// the state: the first call the first hint, the next the second, and once
// every hint has been shown the last one again. An exercise without hints
// is an error that says so.
func (st *State) NextHint(ex *Exercise) (Hint, error) {
	if len(ex.Hints) == 0 {
		return Hint{}, fmt.Errorf("exercise %s has no hints: its task says what to do (svclab workshop check %s says which item fails)", ex.Name, ex.Name)
	}
	e := st.exercise(ex.Name)
	h := Hint{Exercise: ex.Name, Of: len(ex.Hints)}
	if e.HintsShown >= len(ex.Hints) {
		h.N, h.Again = len(ex.Hints), true
	} else {
		e.HintsShown++
		h.N = e.HintsShown
	}
	h.Text = ex.Hints[h.N-1]
	return h, nil
}

// FirstUnpassed is the lesson's first exercise the state has not seen
// pass (nil when every one has).
func (st *State) FirstUnpassed(l *Lesson) *Exercise {
	for i := range l.Spec.Exercises {
		ex := &l.Spec.Exercises[i]
		if e := st.find(ex.Name); e == nil || !e.Passed {
			return ex
		}
	}
	return nil
}

// find is the record of the named exercise, or nil.
func (st *State) find(name string) *ExerciseState {
	for i := range st.Exercises {
		if st.Exercises[i].Name == name {
			return &st.Exercises[i]
		}
	}
	return nil
}

// WriteHint prints a hint as the student sees it.
func WriteHint(w io.Writer, h Hint) {
	fmt.Fprintf(w, "hint %d of %d for %s: %s\n", h.N, h.Of, h.Exercise, h.Text)
	switch {
	case h.Again:
		fmt.Fprintf(w, "(that was the last hint; the task and `svclab workshop check %s` say the rest)\n", h.Exercise)
	case h.N < h.Of:
		fmt.Fprintf(w, "(svclab workshop hint %s gives the next one)\n", h.Exercise)
	}
}
