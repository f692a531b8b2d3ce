package workshop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/svclab/svclab/labs/agents/traffic"
)

// CheckResult is the outcome of an exercise's check.
type CheckResult struct {
	Exercise string
	Passed   bool
	// Item is the index of the failing check item (when !Passed), of
	// Items.
	Item, Items int
	// Why says what failed: the item's why (empty when it has none);
	// Detail is what the lab showed.
	Why    string
	Detail string
	// Wanted is the expression the failed item wanted ("the output does
	// not show /…/"): it is the answer to some exercises, so WriteResult
	// shows it only when Reveal (the item's reveal) or verbose is set.
	Wanted string
	Reveal bool
	// Hints is how many hints the exercise has (svclab workshop hint).
	Hints int
	// CannotRun: this kernel lacks what the exercise requires (Why says
	// what, and where it runs); the check did not run.
	CannotRun bool
}

// expressionError is a check item's failure that names the expression it
// wanted: kept apart from what the lab showed (see CheckResult.Wanted).
type expressionError struct{ msg string }

func (e expressionError) Error() string { return e.msg }

// Exercise returns the exercise called name.
func (l *Lesson) Exercise(name string) (*Exercise, bool) {
	for i := range l.Spec.Exercises {
		if l.Spec.Exercises[i].Name == name {
			return &l.Spec.Exercises[i], true
		}
	}
	return nil, false
}

// Check runs every item of the exercise's check against the live lab; the
// first that does not hold makes the result a fail. An error is returned
// only when the check could not run (a template naming a missing
// Service is a fail: the student has not made it yet).
func (r *Runner) Check(ctx context.Context, ex *Exercise) (CheckResult, error) {
	if why := Unmet(ex.Requires); why != "" {
		return CheckResult{Exercise: ex.Name, CannotRun: true, Why: "this exercise cannot be done here: " + unmetNote(r.Lesson, ex.Requires)}, nil
	}
	res := CheckResult{Exercise: ex.Name, Passed: true, Items: len(ex.Check), Hints: len(ex.Hints)}
	for i, c := range ex.Check {
		detail, err := r.checkItem(ctx, c)
		if err == nil {
			continue
		}
		res.Passed, res.Item, res.Why, res.Reveal = false, i, c.Why, c.Reveal
		var wanted expressionError
		if errors.As(err, &wanted) {
			res.Wanted, res.Detail = wanted.msg, detail
		} else {
			res.Detail = strings.TrimSpace(err.Error() + "\n" + detail)
		}
		return res, ctx.Err()
	}
	return res, nil
}

// checkItem checks one item: nil when it holds, else why not and what
// the lab showed.
func (r *Runner) checkItem(ctx context.Context, c Check) (string, error) {
	switch {
	case c.Traffic != nil:
		return r.checkTraffic(ctx, *c.Traffic)
	case c.ClientIP != nil:
		return r.checkClientIP(ctx, *c.ClientIP)
	}
	out, err := r.runAction(ctx, Action{Svclab: c.Svclab, Host: c.Host, Command: c.Command, Keep: c.Keep})
	if err != nil {
		return "", err
	}
	detail := out.Prompt + "\n" + headLines(out.Output, maxDetailLines)
	if out.Err != nil {
		return detail, out.Err
	}
	for _, e := range c.Expect {
		pattern, err := Expand(e, r.facts())
		if err != nil {
			return detail, err
		}
		if ok, err := matches(pattern, out.Output); err != nil || !ok {
			return detail, orErr(err, expressionError{fmt.Sprintf("the output does not show /%s/", pattern)})
		}
	}
	for _, e := range c.ExpectNot {
		pattern, err := Expand(e, r.facts())
		if err != nil {
			return detail, err
		}
		if ok, err := matches(pattern, out.Output); err != nil || ok {
			return detail, orErr(err, expressionError{fmt.Sprintf("the output shows /%s/", pattern)})
		}
	}
	return "", nil
}

// maxDetailLines bounds the output a failed check item shows.
const maxDetailLines = 15

// headLines is the first n lines of text, and a line saying how many more
// there are.
func headLines(text string, n int) string {
	lines := strings.Split(text, "\n")
	if len(lines) <= n {
		return text
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… (%d more lines)", len(lines)-n)
}

func orErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// checkTraffic sends the connections and tests the split (see TrafficCheck).
func (r *Runner) checkTraffic(ctx context.Context, t TrafficCheck) (string, error) {
	from, to, err := r.expandPair(t.From, t.To)
	if err != nil {
		return "", err
	}
	var expected []string
	for _, name := range slices.Sorted(maps.Keys(t.Expect)) {
		expected = append(expected, name+"="+strconv.FormatFloat(t.Expect[name], 'g', -1, 64))
	}
	opts := traffic.Options{Target: to, Connections: t.Count, Expected: expected, Alpha: t.Alpha}
	if t.Sequential {
		opts.Parallelism = 1
	}
	res, err := r.Lab.Traffic(from, opts, r.labOpts())
	if err != nil {
		return "", err
	}
	rep := res.Report()
	var table strings.Builder
	rep.WriteTable(&table) //nolint:errcheck // a strings.Builder does not fail
	if !rep.Passed() {
		return table.String(), fmt.Errorf("%d connections from %s to %s: %s", t.Count, from, to, rep.VerdictReason)
	}
	if t.Backends > 0 && len(rep.Backends) != t.Backends {
		return table.String(), fmt.Errorf("%d connections from %s to %s reached %d backends, want %d", t.Count, from, to, len(rep.Backends), t.Backends)
	}
	return "", nil
}

// checkClientIP asks /clientip and compares the address the pod saw.
func (r *Runner) checkClientIP(ctx context.Context, c ClientIPCheck) (string, error) {
	from, to, err := r.expandPair(c.From, c.To)
	if err != nil {
		return "", err
	}
	want := c.Want
	if want == "client" {
		want, err = r.facts().HostIP(from)
	} else {
		want, err = Expand(want, r.facts())
	}
	if err != nil {
		return "", err
	}
	n := c.Count
	if n == 0 {
		n = 3
	}
	res, err := r.Lab.Traffic(from, traffic.Options{Target: to, Connections: n, Path: "/clientip"}, r.labOpts())
	if err != nil {
		return "", err
	}
	var seen strings.Builder
	bad := 0
	for _, conn := range res.Connections {
		got := hostOf(conn.Backend)
		if conn.Failure != "" {
			got = "(failed: " + conn.Error + ")"
		}
		fmt.Fprintf(&seen, "%s → %s: the pod saw %s\n", conn.LocalAddress, to, got)
		if got != want {
			bad++
		}
	}
	if bad > 0 || len(res.Connections) < n {
		return seen.String(), fmt.Errorf("%d of %d connections from %s to %s: the pod did not see %s", max(bad, n-len(res.Connections)), n, from, to, want)
	}
	return "", nil
}

func (r *Runner) expandPair(a, b string) (string, string, error) {
	x, err := Expand(a, r.facts())
	if err != nil {
		return "", "", err
	}
	y, err := Expand(b, r.facts())
	return x, y, err
}

// Solve runs the exercise's reference solution, printing each action.
func (r *Runner) Solve(ctx context.Context, ex *Exercise) error {
	for _, a := range ex.Solution {
		out, err := r.runAction(ctx, a)
		if err != nil {
			return fmt.Errorf("exercise %s: solution: %w", ex.Name, err)
		}
		fmt.Fprintf(r.Out, "   %s\n", out.Prompt)
		if out.Output != "" {
			writeIndented(r.Out, out.Output)
		}
		if out.Err != nil {
			return fmt.Errorf("exercise %s: solution: %w", ex.Name, out.Err)
		}
	}
	return nil
}

// WriteResult prints a check's result as the student sees it: which item
// failed and why, what the lab showed, and where the hints are — never the
// expression the item wanted, unless the item reveals it or verbose is set
// (svclab workshop check --verbose, for the teacher).
func WriteResult(w io.Writer, res CheckResult, verbose bool) {
	if res.Passed {
		fmt.Fprintf(w, "✓ %s: passed\n", res.Exercise)
		return
	}
	if res.CannotRun {
		fmt.Fprintf(w, "✗ %s: cannot be checked on this machine\n", res.Exercise)
		fmt.Fprintf(w, "  %s\n", res.Why)
		return
	}
	fmt.Fprintf(w, "✗ %s: not yet (check item %d of %d failed)\n", res.Exercise, res.Item+1, max(res.Items, res.Item+1))
	if res.Why != "" {
		fmt.Fprintf(w, "  why: %s\n", res.Why)
	}
	if res.Wanted != "" && (res.Reveal || verbose) {
		fmt.Fprintf(w, "  wanted: %s\n", res.Wanted)
	}
	if res.Detail != "" {
		writeIndented(w, strings.TrimRight(res.Detail, "\n"))
	}
	if res.Hints > 0 {
		fmt.Fprintf(w, "  stuck? svclab workshop hint %s gives a hint (%d, one at a time)\n", res.Exercise, res.Hints)
	}
}
