package workshop

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// goodReport is the golden report: alice on example-clusterip.
func goodReport(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "report.json.golden"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// controlIn finds what a terminal could take for a command in out: a C0
// control but newline, DEL, a C1 control, a format character (bidi
// overrides and isolates, zero-width ones) or invalid UTF-8.
func controlIn(out string) (string, bool) {
	if !utf8.ValidString(out) {
		return "invalid UTF-8", true
	}
	for i, r := range out {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Cf, r) {
			return fmt.Sprintf("%U at byte %d", r, i), true
		}
	}
	return "", false
}

// TestDecodeReportRejects: a report that is not what `workshop progress
// -o json` writes — hostile names, too many exercises, values out of range
// — is one error naming the file and the field, printable on one line.
func TestDecodeReportRejects(t *testing.T) {
	good := goodReport(t)
	many := make([]string, maxExercises+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"name": "e%d"}`, i)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"escape in the student", `"student": "alice"`, `"student": "alice\u001b]52;c;cHduZWQ=\u0007"`, `student "alice\x1b]52;c;cHduZWQ=\a": '\x1b' is not a letter`},
		{"CR row in an exercise", `"name": "three-pods"`, `"name": "x\r\u001b[2Kbob  ✓ 1"`, `exercises[0].name "x\r\x1b[2Kbob  ✓ 1": a lowercase RFC 1123 label`},
		{"bidi override in the student", `"student": "alice"`, `"student": "alice\u202e"`, `student "alice\u202e": '\u202e' is not a letter`},
		{"C1 CSI in the lesson", `"lesson": "example-clusterip"`, `"lesson": "a\u009b2J"`, `lesson "a\u009b2J": a lowercase RFC 1123 label`},
		{"escape in the title", `"title": "A Service`, `"title": "\u001b[2J A Service`, `title "\x1b[2J A Service over two pods: the chains and the split": want at most 512 bytes of printable text`},
		{"tab in the student", `"student": "alice"`, `"student": "al\tice"`, `student "al\tice": '\t' is not a letter`},
		{"too many exercises", `"exercises": [`, `"exercises": [` + strings.Join(many, ",") + `,`, `exercises: at most 50 exercises (a lesson has no more), got 52`},
		{"exercise twice", `"exercises": [`, `"exercises": [{"name": "three-pods"},`, `exercises[1].name "three-pods": named twice`},
		{"long exercise name", `"name": "three-pods"`, `"name": "` + strings.Repeat("x", 64) + `"`, `exercises[0].name "` + strings.Repeat("x", 64) + `": at most 63 characters`},
		{"long student", `"student": "alice"`, `"student": "` + strings.Repeat("a", 65) + `"`, `student "aaaa`},
		{"negative attempts", `"attempts": 2`, `"attempts": -2`, `exercises[0].attempts "-2": want 0..1000000`},
		{"steps done past the total", `"stepsDone": 3`, `"stepsDone": 4`, `stepsDone "4": want 0..stepsTotal (3)`},
		{"passed past the exercises", `"passed": 1`, `"passed": 9`, `passed "9": want 0..1 (the exercises)`},
		{"another kind", `"kind": "WorkshopReport"`, `"kind": "Lab"`, `kind "Lab": want WorkshopReport`},
		{"unknown field with an escape", `"passed": 1`, `"passed": 1, "\u001b[2J": 1`, "report r.json: \uFFFD[2J: unknown field"},
		{"a CNI svclab has not", `"lab": "example-clusterip"`, `"lab": "example-clusterip", "cni": "weave"`, `cni "weave": want one of`},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(good, c.from, c.to, 1)
			if doc == good {
				t.Fatalf("%q is not in the report", c.from)
			}
			_, err := DecodeReport([]byte(doc), "r.json")
			checkReportError(t, err, "r.json", c.want)
		})
	}
	if _, err := DecodeReport([]byte(good), "r.json"); err != nil {
		t.Errorf("the golden report: %v", err)
	}
}

// checkReportError: err is a *workshop.Error naming source, printable on
// one line, and holds want (with the escapes strconv.Quote makes shown as
// printed: "\x1b" as the four characters).
func checkReportError(t *testing.T, err error, source, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T): want a *workshop.Error", err, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "report "+source+": ") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming %s", msg, source)
	}
	if what, bad := controlIn(msg); bad {
		t.Errorf("error %q holds %s", msg, what)
	}
	if !strings.Contains(msg, want) {
		t.Errorf("error %q\nwant it to hold %q", msg, want)
	}
}

// TestReadReportBounded: a file past MaxReportBytes (or an endless one) is
// refused after reading that much; a hostile file name is printed
// printable.
func TestReadReportBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big\x1b[2J.json")
	if err := os.WriteFile(big, bytes.Repeat([]byte(" "), MaxReportBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadReport(big)
	checkReportError(t, err, filepath.Join(dir, "big\uFFFD[2J.json"), "larger than 64 KiB: not a workshop report")
	if _, err := ReadReport("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than 64 KiB") {
		t.Errorf("/dev/zero: %v", err)
	}
}

// TestStudentNames: user names and people's names pass; what a terminal or
// a table takes for a command does not.
func TestStudentNames(t *testing.T) {
	for _, ok := range []string{"alice", "john.doe", "jane_doe", "José García", "o'brien", "bob@example.org", "Łukasz", "学生1", strings.Repeat("a", MaxStudentLen)} {
		if p := studentProblem(ok); p != "" {
			t.Errorf("%q: %s", ok, p)
		}
	}
	for _, bad := range []string{"", " alice", "alice ", "al\tice", "a\x1b[2Jb", "a\rb", "a\u202eb", "a\u2066b", "a\u200bb", "a\x7fb", "a\u0085b", "a/b", "a;b", strings.Repeat("a", MaxStudentLen+1)} {
		if studentProblem(bad) == "" {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := CheckStudent("a\x1bb", "--student"); err == nil || !strings.HasPrefix(err.Error(), `--student "a\x1bb": `) {
		t.Errorf("CheckStudent: %v", err)
	}
}

// TestClassOutputPrintable: names that reach the class however they came
// (a Class built in code, not read) leave every output printable — no
// escape, carriage return, tab, C1 or bidi control — and one row stays one
// row.
func TestClassOutputPrintable(t *testing.T) {
	hostile := []string{"\x1b]52;c;cHduZWQ=\x07", "x\r\x1b[2Kbob  ✓ 1", "\u202eevil", "\x9b2J", "a\tb", "\xff\xfe", "\x7f"}
	var reps []Report
	for i, name := range hostile {
		reps = append(reps, Report{Kind: ReportKind, Student: name, Lesson: "l" + name, Title: name, StepsTotal: 1,
			Exercises: []ExerciseReport{{Name: name, Attempts: i}}})
	}
	c := NewClass(reps)
	var text, html bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	var rep bytes.Buffer
	if err := reps[0].WriteText(&rep); err != nil {
		t.Fatal(err)
	}
	if err := reps[1].WriteHTML(&rep, ""); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"class text": text.String(), "class html": html.String(), "report": rep.String()} {
		if what, bad := controlIn(out); bad {
			t.Errorf("%s holds %s:\n%q", name, what, out)
		}
	}
	if rows := strings.Count(text.String(), "\n"); rows != len(hostile)+2 {
		t.Errorf("class text has %d lines, want %d (header, one per report, PASSED):\n%s", rows, len(hostile)+2, text.String())
	}
}

// writeReports writes reps as files in dir, named after their student.
func writeReports(t testing.TB, dir string, reps ...Report) []string {
	t.Helper()
	var paths []string
	for i, r := range reps {
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("%03d-%s.json", i, r.Student))
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestReadClass: reports are checked against their lessons when those are
// given (an exercise the lesson does not declare, a lesson that is not
// there: one error naming the file and field), and the class is bounded in
// columns and cells with or without them.
func TestReadClass(t *testing.T) {
	l, st := reportFixture(t)
	alice := NewReport(l, st)
	lessons := &ClassLessons{Dir: "clusters/lessons", Lessons: []*Lesson{l}}
	dir := t.TempDir()

	c, err := ReadClass(writeReports(t, dir, alice), lessons)
	if err != nil || len(c.Rows) != 1 || len(c.Exercises) != 1 {
		t.Fatalf("ReadClass(alice) = %+v, %v", c, err)
	}

	forged := alice
	forged.Student = "mallory"
	forged.Exercises = append([]ExerciseReport{}, alice.Exercises...)
	forged.Exercises = append(forged.Exercises, ExerciseReport{Name: "free-points", Passed: true, Attempts: 1})
	paths := writeReports(t, dir, alice, forged)
	_, err = ReadClass(paths, lessons)
	checkReportError(t, err, paths[1], `exercises[1].name "free-points": lesson example-clusterip has no such exercise (it has three-pods)`)
	if c, err := ReadClass(paths, nil); err != nil || len(c.Exercises) != 2 {
		t.Errorf("without lessons: %d columns, %v; want 2 (names checked as names only)", len(c.Exercises), err)
	}

	elsewhere := alice
	elsewhere.Lesson = "no-such-lesson"
	paths = writeReports(t, dir, elsewhere)
	_, err = ReadClass(paths, lessons)
	checkReportError(t, err, paths[0], `lesson "no-such-lesson": no such lesson in clusters/lessons (it has example-clusterip)`)

	// Without lessons, reports of made-up lessons add columns: the
	// MaxClassColumns+1-th is refused, naming the report that adds it.
	var wide []Report
	for i := 0; len(wide)*maxExercises <= MaxClassColumns; i++ {
		r := Report{Kind: ReportKind, Student: "s", Lesson: fmt.Sprintf("lesson-%d", i), StepsTotal: 1}
		for j := range maxExercises {
			r.Exercises = append(r.Exercises, ExerciseReport{Name: fmt.Sprintf("e%d", j)})
		}
		wide = append(wide, r)
	}
	paths = writeReports(t, t.TempDir(), wide...)
	_, err = ReadClass(paths, nil)
	checkReportError(t, err, paths[len(paths)-1], fmt.Sprintf("exercises: the class would have %d columns", len(wide)*maxExercises))

	// Rows × columns: MaxClassCells/MaxClassColumns+1 students on lessons
	// of MaxClassColumns columns in all (after the first reports, which
	// make the columns, reports without exercises: still a row each).
	students := MaxClassCells/MaxClassColumns + 1
	var tall []Report
	for i := range MaxClassColumns / maxExercises {
		tall = append(tall, wide[i])
	}
	for i := len(tall); i < students; i++ {
		tall = append(tall, Report{Kind: ReportKind, Student: fmt.Sprintf("s%d", i), Lesson: wide[0].Lesson, Exercises: []ExerciseReport{}})
	}
	paths = writeReports(t, t.TempDir(), tall...)
	_, err = ReadClass(paths, nil)
	checkReportError(t, err, paths[len(paths)-1], fmt.Sprintf("the class would have %d rows × %d columns, over %d cells", students, MaxClassColumns, MaxClassCells))
}
