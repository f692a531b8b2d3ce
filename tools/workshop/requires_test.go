package workshop

import (
	"strings"
	"testing"
	"time"
)

func TestCheckRequires(t *testing.T) {
	if err := checkRequires("l.yaml", "spec.steps[0].requires", []string{"ipvs"}); err != nil {
		t.Errorf("ipvs: %v", err)
	}
	err := checkRequires("l.yaml", "spec.steps[0].requires", []string{"ipvs", "nft"})
	if err == nil || !strings.Contains(err.Error(), "spec.steps[0].requires[1]") || !strings.Contains(err.Error(), `"nft"`) {
		t.Errorf("nft: got %v, want an error naming spec.steps[0].requires[1] and \"nft\"", err)
	}
	if err := checkRequires("l.yaml", "f", []string{"ipvs", "ipvs"}); err == nil {
		t.Error("ipvs twice: no error")
	}
}

func TestUnmetNothingRequired(t *testing.T) {
	if why := Unmet(nil); why != "" {
		t.Errorf("Unmet(nil) = %q", why)
	}
	if why := Unmet([]string{"ipvs"}); why != "" && !strings.Contains(why, "no IPVS") {
		t.Errorf("Unmet(ipvs) = %q: a reason must say what is missing", why)
	}
}

// TestWriteUnmet: on a kernel without IPVS the lesson's start names every
// part it skips and the command that runs the lesson in svclab's VM; on a
// kernel with IPVS it says nothing.
func TestWriteUnmet(t *testing.T) {
	l := &Lesson{}
	l.Metadata.Name = "demo"
	l.Spec.Steps = []Step{{Name: "plain"}, {Name: "switch", Requires: []string{"ipvs"}}}
	l.Spec.Exercises = []Exercise{{Name: "sched", Requires: []string{"ipvs"}}, {Name: "other"}}
	var b strings.Builder
	WriteUnmet(&b, l)
	if Unmet([]string{"ipvs"}) == "" {
		if b.Len() != 0 {
			t.Errorf("this kernel has IPVS, yet WriteUnmet wrote:\n%s", b.String())
		}
		return
	}
	got := b.String()
	for _, want := range []string{"no IPVS", "Skipped here: step switch, exercise sched.", VMCommand(l)} {
		if !strings.Contains(got, want) {
			t.Errorf("WriteUnmet does not say %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"plain", "other"} {
		if strings.Contains(got, absent) {
			t.Errorf("WriteUnmet names %q, which runs here:\n%s", absent, got)
		}
	}
}

// TestCannotRunIsNoAttempt: a check that could not run says so, and
// counts as no attempt in the student's progress.
func TestCannotRunIsNoAttempt(t *testing.T) {
	res := CheckResult{Exercise: "sched", CannotRun: true, Why: "this exercise cannot be done here: no IPVS"}
	var b strings.Builder
	WriteResult(&b, res, false)
	if got := b.String(); !strings.Contains(got, "cannot be checked on this machine") || strings.Contains(got, "not yet") {
		t.Errorf("WriteResult:\n%s", got)
	}
	st := &State{}
	st.Record(res, time.Now())
	if e := st.exercise("sched"); e.Attempts != 0 || e.Passed {
		t.Errorf("after a check that could not run: %+v, want no attempt", *e)
	}
}

// TestUnmetNative: a step that requires native timings is skipped inside
// svclab's VM, without pointing to the VM as where it runs.
func TestUnmetNative(t *testing.T) {
	t.Setenv("SVCLAB_VM", "")
	if why := Unmet([]string{"native"}); why != "" {
		t.Errorf("outside the VM: Unmet(native) = %q", why)
	}
	t.Setenv("SVCLAB_VM", "1")
	why := Unmet([]string{"native"})
	if !strings.Contains(why, "svclab's VM") {
		t.Errorf("inside the VM: Unmet(native) = %q, want the reason", why)
	}
	l := &Lesson{}
	l.Metadata.Name = "demo"
	if note := unmetNote(l, []string{"native"}); strings.Contains(note, VMCommand(l)) {
		t.Errorf("the note for a native step sends the student to the VM: %q", note)
	}
}
