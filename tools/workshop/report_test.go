package workshop

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reportFixture is the example lesson with a student who passed its
// exercise at the second attempt, 4m10s after starting, all steps done.
func reportFixture(t *testing.T) (*Lesson, *State) {
	t.Helper()
	path := filepath.Join("..", "..", "clusters", "lessons", "example-clusterip", "lesson.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data, path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	st := &State{Lesson: l.Metadata.Name, Lab: l.Metadata.Name, Student: "alice", Started: start, Cursor: 2, StepsDone: 3}
	st.Record(CheckResult{Exercise: "three-pods"}, start.Add(time.Minute))
	st.Record(CheckResult{Exercise: "three-pods", Passed: true}, start.Add(4*time.Minute+10*time.Second))
	st.Record(CheckResult{Exercise: "three-pods"}, start.Add(5*time.Minute)) // after a pass: not counted
	return l, st
}

// TestReportGolden: the report's JSON, text and HTML on whole outputs.
func TestReportGolden(t *testing.T) {
	l, st := reportFixture(t)
	rep := NewReport(l, st)
	if rep.Passed != 1 || rep.Exercises[0].Attempts != 2 || rep.Exercises[0].Seconds != 250 {
		t.Errorf("report %+v: want 1 passed at the 2nd attempt after 250s", rep)
	}
	var js, text, html bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.json.golden", js.String())
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.txt.golden", text.String())
	if err := rep.WriteHTML(&html, `<svg xmlns="http://www.w3.org/2000/svg"><text>node1</text></svg>`); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.html.golden", html.String())
	checkSelfContained(t, html.String())
}

// checkSelfContained: no script, no external asset.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<script", "src=", "href=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page has %q: not self-contained", bad)
		}
	}
}

// TestReportEscapes: names from reports are escaped in HTML.
func TestReportEscapes(t *testing.T) {
	l, st := reportFixture(t)
	st.Student = `<img src=x onerror=alert(1)>`
	var html bytes.Buffer
	if err := NewReport(l, st).WriteHTML(&html, ""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html.String(), "<img") {
		t.Error("the student's name reached the page unescaped")
	}
}

// TestReadReport reads back what WriteJSON wrote, and refuses other JSON.
func TestReadReport(t *testing.T) {
	l, st := reportFixture(t)
	dir := t.TempDir()
	var js bytes.Buffer
	if err := NewReport(l, st).WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "alice.json")
	if err := os.WriteFile(good, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := ReadReport(good)
	if err != nil || rep.Student != "alice" || rep.Passed != 1 {
		t.Errorf("ReadReport = %+v, %v", rep, err)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"kind":"Lab"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReport(other); err == nil || !strings.Contains(err.Error(), `kind "Lab"`) {
		t.Errorf("another kind of JSON: got %v", err)
	}
}

// TestClassGolden: three students (one with two reports: the later wins)
// on two lessons, as text and HTML.
func TestClassGolden(t *testing.T) {
	l, st := reportFixture(t)
	alice := NewReport(l, st)
	bob := alice
	bob.Student, bob.StepsDone, bob.Passed = "bob", 2, 0
	bob.Exercises = []ExerciseReport{{Name: "three-pods", Attempts: 3}}
	carolOld := alice
	carolOld.Student, carolOld.Passed = "carol", 0
	carolOld.Exercises = []ExerciseReport{{Name: "three-pods"}}
	carol := carolOld
	carol.Exercises = []ExerciseReport{{Name: "three-pods", Passed: true, Attempts: 1, Seconds: 100}}
	other := Report{Kind: ReportKind, Student: "alice", Lesson: "seed-004-nodeport", StepsDone: 10, StepsTotal: 10,
		Exercises: []ExerciseReport{{Name: "client-ip", Attempts: 1}, {Name: "find-the-hash", Passed: true, Attempts: 1, Seconds: 60}}, Passed: 1}
	c := NewClass([]Report{other, bob, carolOld, alice, carol})
	var text, html bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "class.txt.golden", text.String())
	if err := c.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "class.html.golden", html.String())
	checkSelfContained(t, html.String())
}
