package workshop

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

// TestLessons runs every lesson under clusters/lessons against the kernel,
// on one lab per lesson (and per CNI of a lesson's spec.cnis, as
// TestLessons/LESSON/CNI): it creates the lesson's lab, runs every step
// checking its expectations against the live output, then for each
// exercise in order checks that its check FAILS (the lab as the steps and
// the earlier exercises' solutions left it), applies the reference
// solution, and checks that the check now PASSES; then it deletes the lab.
// Traffic checks keep traffic.DefaultAlpha (1e-6) unless a lesson says
// otherwise: a correct lab fails one such check in at most a million runs.
func TestLessons(t *testing.T) {
	roottest.Require(t, "builds each lesson's lab from network namespaces")
	host := roottest.SnapshotHost()
	t.Cleanup(func() {
		if diff := host.Diff(roottest.SnapshotHost()); diff != "" {
			t.Errorf("the lessons changed the host's root namespace:\n%s", diff)
		}
	})
	bin := roottest.SharedBinary(t)
	t.Setenv("SVCLAB_WORKSHOP_DIR", t.TempDir())
	lessons, err := ListLessons(lessonsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lessons {
		t.Run(filepath.Base(l.Dir), func(t *testing.T) {
			if len(l.Spec.CNIs) == 0 {
				runLesson(t, l, bin, "")
				return
			}
			for _, cni := range l.Spec.CNIs {
				t.Run(cni, func(t *testing.T) { runLesson(t, l, bin, cni) })
			}
		})
	}
}

// lessonTimeout bounds one whole lesson (seed-002 takes about 4 minutes
// in svclab's VM). The lab and the svclab commands a lesson runs wait for
// the proxies up to netns.DefaultTimeout.
const lessonTimeout = 20 * time.Minute

// runLesson runs one lesson both ways on a fresh lab (of the given CNI, ""
// for the lesson's) and deletes it.
func runLesson(t *testing.T, l *Lesson, bin, cni string) {
	ctx, cancel := context.WithTimeout(context.Background(), lessonTimeout)
	defer cancel()
	var out bytes.Buffer
	r, _, err := Start(ctx, l, StartOptions{Out: &out, Binary: bin, Student: "test", CNI: cni})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, out.String())
	}
	t.Cleanup(func() {
		if _, err := Reset(); err != nil {
			t.Errorf("reset: %v", err)
		}
		if names, _ := netns.List(); len(names) > 0 {
			for _, n := range names {
				if n == r.Lab.Name() {
					t.Errorf("lab %s still listed after reset", n)
				}
			}
		}
		if ns, _ := network.Namespaces(r.Lab.Name()); len(ns) != 0 {
			t.Errorf("reset left the lab's namespaces: %v", ns)
		}
	})
	for i := range l.Spec.Steps {
		st := &l.Spec.Steps[i]
		if !t.Run(stepTestName(st.Name), func(t *testing.T) {
			if why := Unmet(st.Requires); why != "" {
				t.Skipf("step %s not run: %s", st.Name, why)
			}
			if text, err := r.RunStep(ctx, i); err != nil {
				// The failing step's own output, whose end is the failing
				// command's: the whole transcript is too long for CI's excerpt.
				t.Fatalf("%v\n%s", err, text)
			}
		}) {
			t.Fatalf("step %s failed: the later steps and the exercises need it", st.Name)
		}
	}
	for i := range l.Spec.Exercises {
		ex := &l.Spec.Exercises[i]
		solved := false
		if !t.Run(exerciseTestName(ex.Name), func(t *testing.T) { runExercise(ctx, t, r, ex, &out, &solved) }) && !solved {
			t.Fatalf("exercise %s: its solution was not applied, and the later exercises start from the lab it leaves", ex.Name)
		}
	}
	if t.Failed() {
		t.Logf("lesson output:\n%s", out.String())
	}
}

// runExercise checks one exercise both ways: its check fails on the lab as
// the steps and the earlier exercises left it, and passes after its
// reference solution. *solved says whether the lab is as the solution
// leaves it (or untouched, when the exercise is skipped).
func runExercise(ctx context.Context, t *testing.T, r *Runner, ex *Exercise, out *bytes.Buffer, solved *bool) {
	if why := Unmet(ex.Requires); why != "" {
		*solved = true
		t.Skipf("exercise %s not run: %s", ex.Name, why)
	}
	res, err := r.Check(ctx, ex)
	if err != nil {
		t.Fatalf("exercise %s: check before the solution: %v", ex.Name, err)
	}
	if res.Passed {
		t.Errorf("exercise %s: its check passes before the solution is applied: it checks nothing the student does", ex.Name)
	}
	if err := r.Solve(ctx, ex); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	*solved = true
	res, err = r.Check(ctx, ex)
	if err != nil {
		t.Fatalf("exercise %s: check after the solution: %v", ex.Name, err)
	}
	if !res.Passed {
		var b bytes.Buffer
		WriteResult(&b, res, true)
		t.Errorf("exercise %s: its check fails after the reference solution:\n%s", ex.Name, b.String())
	}
}

// stepTestName and exerciseTestName name a lesson's steps and exercises as
// subtests of TestLessons/LESSON (TestLessonsInVM looks for them).
func stepTestName(step string) string         { return "step-" + step }
func exerciseTestName(exercise string) string { return "exercise-" + exercise }
