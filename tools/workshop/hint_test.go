package workshop

import (
	"strings"
	"testing"
)

// TestNextHintOneAtATime: each call gives the next hint and records it;
// after the last, the last again.
func TestNextHintOneAtATime(t *testing.T) {
	ex := &Exercise{Name: "four-replicas", Hints: []string{"first", "second"}}
	st := &State{}
	for i, want := range []Hint{
		{Exercise: "four-replicas", N: 1, Of: 2, Text: "first"},
		{Exercise: "four-replicas", N: 2, Of: 2, Text: "second"},
		{Exercise: "four-replicas", N: 2, Of: 2, Text: "second", Again: true},
	} {
		got, err := st.NextHint(ex)
		if err != nil || got != want {
			t.Errorf("call %d: %+v (%v), want %+v", i+1, got, err, want)
		}
	}
	if e := st.find("four-replicas"); e == nil || e.HintsShown != 2 || e.Attempts != 0 {
		t.Errorf("state after the hints: %+v, want 2 shown and no attempt", e)
	}
	var b strings.Builder
	WriteHint(&b, Hint{Exercise: "x", N: 1, Of: 2, Text: "first"})
	if got := b.String(); !strings.HasPrefix(got, "hint 1 of 2 for x: first\n") || !strings.Contains(got, "svclab workshop hint x gives the next one") {
		t.Errorf("WriteHint:\n%s", got)
	}
	if _, err := st.NextHint(&Exercise{Name: "bare"}); err == nil || !strings.Contains(err.Error(), "exercise bare has no hints") {
		t.Errorf("an exercise without hints: %v", err)
	}
}

// TestFirstUnpassed: hint's default exercise is the first not passed.
func TestFirstUnpassed(t *testing.T) {
	l := &Lesson{Spec: Spec{Exercises: []Exercise{{Name: "a"}, {Name: "b"}}}}
	st := &State{Exercises: []ExerciseState{{Name: "a", Passed: true}}}
	if ex := st.FirstUnpassed(l); ex == nil || ex.Name != "b" {
		t.Errorf("FirstUnpassed = %v, want b", ex)
	}
	st.Exercises = append(st.Exercises, ExerciseState{Name: "b", Passed: true})
	if ex := st.FirstUnpassed(l); ex != nil {
		t.Errorf("FirstUnpassed = %s, want none", ex.Name)
	}
}

// TestWriteResultKeepsTheAnswer: a failed item says which it is and why,
// and shows the expression it wanted only when the item reveals it or
// the teacher asks (--verbose).
func TestWriteResultKeepsTheAnswer(t *testing.T) {
	res := CheckResult{Exercise: "five-replicas", Item: 0, Items: 2, Why: "the chain does not hold the ladder of 5 pods",
		Wanted: `the output does not show /--probability 0\.20000000019/`, Detail: "$ iptables-save -t nat\n-A KUBE-SVC-X", Hints: 2}
	write := func(res CheckResult, verbose bool) string {
		var b strings.Builder
		WriteResult(&b, res, verbose)
		return b.String()
	}
	got := write(res, false)
	for _, want := range []string{"✗ five-replicas: not yet (check item 1 of 2 failed)", "why: the chain does not hold", "-A KUBE-SVC-X", "svclab workshop hint five-replicas"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "0\\.2") || strings.Contains(got, "0.2") || strings.Contains(got, "wanted") {
		t.Errorf("a failed check shows the expression it wanted:\n%s", got)
	}
	if got := write(res, true); !strings.Contains(got, `wanted: the output does not show /--probability 0\.20000000019/`) {
		t.Errorf("--verbose does not show the expression:\n%s", got)
	}
	res.Reveal = true
	if got := write(res, false); !strings.Contains(got, "wanted: ") {
		t.Errorf("an item with reveal: true does not show the expression:\n%s", got)
	}
}
