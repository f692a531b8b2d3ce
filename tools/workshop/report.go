package workshop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// ReportKind marks a student's progress report (so that `workshop class`
// refuses other JSON).
const ReportKind = "WorkshopReport"

// Report is one student's progress on one lesson: what `workshop progress
// -o json` writes and `workshop class` reads.
type Report struct {
	Kind       string           `json:"kind"`
	Student    string           `json:"student"`
	Lesson     string           `json:"lesson"`
	Title      string           `json:"title"`
	Seed       string           `json:"seed,omitempty"`
	Lab        string           `json:"lab"`
	CNI        string           `json:"cni,omitempty"`
	Started    time.Time        `json:"started"`
	StepsDone  int              `json:"stepsDone"`
	StepsTotal int              `json:"stepsTotal"`
	Exercises  []ExerciseReport `json:"exercises"`
	Passed     int              `json:"passed"`
}

// ExerciseReport is one exercise in a Report.
type ExerciseReport struct {
	Name     string     `json:"name"`
	Passed   bool       `json:"passed"`
	Attempts int        `json:"attempts"`
	PassedAt *time.Time `json:"passedAt,omitempty"`
	// Seconds is from the lesson's start to the pass.
	Seconds int64 `json:"seconds,omitempty"`
}

// NewReport is the report of st on lesson l: every exercise of the
// lesson, in its order.
func NewReport(l *Lesson, st *State) Report {
	rep := Report{
		Kind: ReportKind, Student: st.Student, Lesson: l.Metadata.Name, Title: l.Spec.Title,
		Seed: l.Spec.Seed, Lab: st.Lab, CNI: st.CNI, Started: st.Started,
		StepsDone: st.StepsDone, StepsTotal: len(l.Spec.Steps), Exercises: []ExerciseReport{},
	}
	for _, ex := range l.Spec.Exercises {
		er := ExerciseReport{Name: ex.Name}
		for _, es := range st.Exercises {
			if es.Name == ex.Name {
				er.Passed, er.Attempts, er.PassedAt = es.Passed, es.Attempts, es.PassedAt
			}
		}
		if er.PassedAt != nil {
			er.Seconds = int64(er.PassedAt.Sub(st.Started) / time.Second)
			rep.Passed++
		}
		rep.Exercises = append(rep.Exercises, er)
	}
	return rep
}

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a terminal (names made printable).
func (r Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s — lesson %s: %s\n", printable(r.Student), printable(r.Lesson), printable(r.Title))
	fmt.Fprintf(w, "steps: %d of %d\n", r.StepsDone, r.StepsTotal)
	fmt.Fprintf(w, "exercises: %d of %d passed\n", r.Passed, len(r.Exercises))
	for _, e := range r.Exercises {
		fmt.Fprintf(w, "  %s\n", exerciseCell(e, true))
	}
	return nil
}

// exerciseCell is "✓ name (2 attempts, 3m10s)" or "✗ name (1 attempt)".
func exerciseCell(e ExerciseReport, named bool) string {
	mark, s := "✗", ""
	if e.Passed {
		mark = "✓"
	}
	if named {
		s = " " + printable(e.Name)
	}
	switch {
	case e.Attempts == 0:
		return "·" + s + " (not tried)"
	case e.Passed:
		return fmt.Sprintf("%s%s (%d %s, %s)", mark, s, e.Attempts, plural(e.Attempts, "attempt", "attempts"), time.Duration(e.Seconds)*time.Second)
	}
	return fmt.Sprintf("%s%s (%d %s)", mark, s, e.Attempts, plural(e.Attempts, "attempt", "attempts"))
}

// ReadReport reads one student's JSON report (at most MaxReportBytes) and
// checks it as DecodeReport does. Errors name the file (its name made
// printable: a student may have chosen it) and the field.
func ReadReport(path string) (Report, error) {
	src := printable(path)
	data, err := reportFile.ReadFile(path)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Source = src
		}
		return Report{}, printableError(err)
	}
	return DecodeReport(data, src)
}
