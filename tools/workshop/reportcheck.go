package workshop

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/svclab/svclab/internal/strictyaml"
	"github.com/svclab/svclab/labs/netns/topology"
)

// A report is written by a student and read by the teacher (`workshop
// class`), so it is checked as hostile input: bounded in size and in
// exercises, every name a name (a DNS label, or a student's name of
// letters, digits and a few marks), nothing a terminal takes for a command.
const (
	// MaxReportBytes bounds a report file; one of a lesson with the most
	// exercises a lesson may have is under 16 KiB.
	MaxReportBytes = 64 << 10
	// MaxStudentLen bounds a student's name, in characters.
	MaxStudentLen = 64
	// maxReportTitle bounds a report's title (the lesson's), in bytes.
	maxReportTitle = 512
	// maxAttempts bounds an exercise's attempts in a report.
	maxAttempts = 1_000_000
	// maxValueInError bounds the value an error quotes.
	maxValueInError = 80
)

// reportFile is the report's format: its errors (`report <file>: <field>
// "<value>": <problem>`) and its bound.
var reportFile = strictyaml.Format{
	Prefix:   "report",
	Kind:     ReportKind,
	Noun:     "workshop report",
	MaxBytes: MaxReportBytes,
}

// reportErr is the error for one field of the report at source; value is
// quoted (strconv.Quote: control characters escaped) and cut short.
func reportErr(source, field, value, format string, args ...any) *Error {
	return reportFile.FieldError(source, field, clip(value), format, args...)
}

// clip cuts s to maxValueInError bytes and marks the cut.
func clip(s string) string { return clipTo(s, maxValueInError) }

// clipTo cuts s to n bytes (on a rune boundary) and marks the cut.
func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// DecodeReport decodes one student's report (JSON, as `workshop progress
// -o json` writes it) and checks every field; source names it in errors.
// The error is one *Error naming source and the field, its message one
// printable line.
func DecodeReport(data []byte, source string) (Report, error) {
	r, err := strictyaml.Decode[Report](reportFile, data, source)
	if err != nil {
		return Report{}, printableError(err)
	}
	if err := r.validate(source); err != nil {
		return Report{}, err
	}
	return *r, nil
}

// printableError makes a decoding error one printable line of bounded
// length: the decoders may quote what they could not read, and an unknown
// field's path is the report's own key.
func printableError(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	e.Field = clip(printable(e.Field))
	e.Value = clip(e.Value)
	e.Problem = clipTo(printable(strings.ReplaceAll(e.Problem, "\n", " ")), 4*maxValueInError)
	return e
}

// validate checks a decoded report field by field; the first problem is
// the error.
func (r *Report) validate(src string) error {
	if r.Kind != ReportKind {
		return reportErr(src, "kind", r.Kind, "want %s (svclab workshop progress -o json writes one)", ReportKind)
	}
	if problem := studentProblem(r.Student); problem != "" {
		return reportErr(src, "student", r.Student, "%s", problem)
	}
	if err := reportLabel(src, "lesson", r.Lesson, topology.MaxLabNameLen); err != nil {
		return err
	}
	if len(r.Title) > maxReportTitle || !isPrintable(r.Title) {
		return reportErr(src, "title", r.Title, "want at most %d bytes of printable text", maxReportTitle)
	}
	if r.Seed != "" && !seedPattern.MatchString(r.Seed) {
		return reportErr(src, "seed", r.Seed, "want three digits")
	}
	if r.Lab != "" {
		if err := reportLabel(src, "lab", r.Lab, topology.MaxLabNameLen); err != nil {
			return err
		}
	}
	if r.CNI != "" && !slices.Contains(topology.CNIs(), topology.CNI(r.CNI)) {
		return reportErr(src, "cni", r.CNI, "want one of %v", topology.CNIs())
	}
	if r.StepsTotal < 0 || r.StepsTotal > maxSteps {
		return reportErr(src, "stepsTotal", fmt.Sprint(r.StepsTotal), "want 0..%d", maxSteps)
	}
	if r.StepsDone < 0 || r.StepsDone > r.StepsTotal {
		return reportErr(src, "stepsDone", fmt.Sprint(r.StepsDone), "want 0..stepsTotal (%d)", r.StepsTotal)
	}
	if len(r.Exercises) > maxExercises {
		return reportErr(src, "exercises", "", "at most %d exercises (a lesson has no more), got %d", maxExercises, len(r.Exercises))
	}
	seen := map[string]bool{}
	for i, e := range r.Exercises {
		field := fmt.Sprintf("exercises[%d]", i)
		if err := reportLabel(src, field+".name", e.Name, validation.DNS1123LabelMaxLength); err != nil {
			return err
		}
		if seen[e.Name] {
			return reportErr(src, field+".name", e.Name, "named twice")
		}
		seen[e.Name] = true
		if e.Attempts < 0 || e.Attempts > maxAttempts {
			return reportErr(src, field+".attempts", fmt.Sprint(e.Attempts), "want 0..%d", maxAttempts)
		}
		if e.Seconds < 0 {
			return reportErr(src, field+".seconds", fmt.Sprint(e.Seconds), "want 0 or more")
		}
	}
	if r.Passed < 0 || r.Passed > len(r.Exercises) {
		return reportErr(src, "passed", fmt.Sprint(r.Passed), "want 0..%d (the exercises)", len(r.Exercises))
	}
	return nil
}

// checkDeclared checks the report against the lesson it names: every
// exercise one the lesson declares.
func (r *Report) checkDeclared(src string, l *Lesson) error {
	var names []string
	for _, ex := range l.Spec.Exercises {
		names = append(names, ex.Name)
	}
	for i, e := range r.Exercises {
		if !slices.Contains(names, e.Name) {
			return reportErr(src, fmt.Sprintf("exercises[%d].name", i), e.Name, "lesson %s has no such exercise (it has %s)", l.Metadata.Name, orNone(names))
		}
	}
	return nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// reportLabel requires a DNS-1123 label of at most max characters.
func reportLabel(src, field, name string, max int) error {
	switch {
	case name == "":
		return reportErr(src, field, "", "required")
	case len(name) > max:
		return reportErr(src, field, name, "at most %d characters", max)
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return reportErr(src, field, name, "%s", errs[0])
	}
	return nil
}

// studentProblem says what is wrong with a student's name, or "": it has
// 1 to MaxStudentLen characters, letters of any script, digits, spaces
// (not at either end) and the marks . _ - @ ' — what a user name or a
// person's name holds, and nothing a terminal or a table takes for a
// command (control characters, bidi overrides, tabs).
func studentProblem(name string) string {
	switch n := len([]rune(name)); {
	case name == "":
		return "required"
	case n > MaxStudentLen:
		return fmt.Sprintf("at most %d characters, got %d", MaxStudentLen, n)
	case strings.TrimSpace(name) != name:
		return "starts or ends with a space"
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(" ._-@'", r) {
			return fmt.Sprintf("%q is not a letter, a digit, a space or one of . _ - @ '", r)
		}
	}
	return ""
}

// CheckStudent is studentProblem as an error naming where the name came
// from (a flag, $SUDO_USER).
func CheckStudent(name, from string) error {
	if problem := studentProblem(name); problem != "" {
		return fmt.Errorf("%s %q: %s", from, clip(name), problem)
	}
	return nil
}
