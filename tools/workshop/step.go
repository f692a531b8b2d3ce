package workshop

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// StepError is a step whose output did not show what the lesson expects
// (or whose command failed): the lesson and the lab disagree.
type StepError struct {
	Step    string
	Problem string
}

func (e *StepError) Error() string { return fmt.Sprintf("step %s: %s", e.Step, e.Problem) }

// RunStep runs step i of the lesson live: it prints the step's heading and
// explanation, runs its actions printing each prompt and output, and
// checks its expectations against the output. It returns what it printed
// (to show again with `back`) and a *StepError when an expectation fails.
func (r *Runner) RunStep(ctx context.Context, i int) (string, error) {
	st := r.Lesson.Spec.Steps[i]
	var b strings.Builder
	w := io.MultiWriter(r.Out, &b)
	fmt.Fprintf(w, "\n%s\n", StepHeading(r.Lesson, i))
	writeIndented(w, strings.TrimRight(st.Explain, "\n"))
	if why := Unmet(st.Requires); why != "" {
		fmt.Fprintf(w, "   (skipped here: %s)\n", unmetNote(r.Lesson, st.Requires))
		return b.String(), nil
	}
	var outputs []string
	for _, a := range st.Run {
		out, err := r.runAction(ctx, a)
		if err != nil {
			return b.String(), &StepError{Step: st.Name, Problem: err.Error()}
		}
		fmt.Fprintf(w, "\n   %s\n", out.Prompt)
		if out.Output != "" {
			writeIndented(w, out.Output)
		}
		if out.Err != nil {
			return b.String(), &StepError{Step: st.Name, Problem: out.Err.Error()}
		}
		outputs = append(outputs, out.Output)
	}
	all := strings.Join(outputs, "\n")
	for _, e := range st.Expect {
		if err := r.checkExpectation(e, all); err != nil {
			fmt.Fprintf(w, "   ✗ %s\n", err.Problem)
			err.Step = st.Name
			return b.String(), err
		}
	}
	if len(st.Expect) > 0 {
		fmt.Fprintf(w, "   ✓ the output shows what the lesson says (%d %s checked)\n", len(st.Expect), plural(len(st.Expect), "expectation", "expectations"))
	}
	return b.String(), nil
}

// checkExpectation checks one expectation against a step's output.
func (r *Runner) checkExpectation(e Expectation, output string) *StepError {
	pattern, want := e.Output, true
	if pattern == "" {
		pattern, want = e.Absent, false
	}
	expanded, err := Expand(pattern, r.facts())
	if err != nil {
		return &StepError{Problem: err.Error()}
	}
	ok, err := matches(expanded, output)
	if err != nil {
		return &StepError{Problem: err.Error()}
	}
	if ok == want {
		return nil
	}
	problem := fmt.Sprintf("expected the output to show /%s/, it does not", expanded)
	if !want {
		problem = fmt.Sprintf("expected the output not to show /%s/, it does", expanded)
	}
	if e.Why != "" {
		problem += ": " + e.Why
	}
	return &StepError{Problem: problem}
}

// StepHeading is "Step 2/5 · chains", the line a step starts with.
func StepHeading(l *Lesson, i int) string {
	return fmt.Sprintf("Step %d/%d · %s", i+1, len(l.Spec.Steps), l.Spec.Steps[i].Name)
}

func writeIndented(w io.Writer, text string) {
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "   %s\n", line)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
