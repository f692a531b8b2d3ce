package workshop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
)

// Bounds a teacher's `workshop class` keeps whatever the students wrote:
// its output and its peak memory (the old code wrote 155 MiB of HTML and
// allocated ~1.9 GiB for one report of 24,000 exercise names).
const (
	classOutputBound = 4 << 20   // bytes of stdout and stderr
	classRSSBound    = 256 << 20 // bytes of peak resident memory
)

// TestAttackerClassReports is issue #25, finding 5, as the student who
// attacks the teacher: reports whose names carry terminal commands (OSC 52
// writing the teacher's clipboard, a carriage return and an erase that
// forge another student's row, a bidi override, a file name with an
// escape), a report of 24,000 exercise names among 300 good ones, and 300
// reports of made-up lessons of 50 exercises each — fed to the svclab
// binary's `workshop class` (text and HTML) as the test's user and as
// nobody. No control character reaches the output, the output and the
// peak memory stay bounded, and the hostile report is one error naming
// its file and field; the 300 good reports alone still make the table.
func TestAttackerClassReports(t *testing.T) {
	bin := roottest.SharedBinary(t)
	dir, err := os.MkdirTemp("", "svclab-class-attack-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // nobody reads the reports and runs the binary
		t.Fatal(err)
	}
	myBin := filepath.Join(dir, "svclab")
	copyFile(t, bin, myBin, 0o755)

	l, st := reportFixture(t)
	alice := NewReport(l, st)
	var good []string
	for i := range 300 {
		r := alice
		r.Student = fmt.Sprintf("student%03d", i)
		good = append(good, writeReportFile(t, dir, r.Student+".json", mustJSON(t, r)))
	}
	golden := goodReport(t)
	osc52 := writeReportFile(t, dir, "mallory.json", strings.Replace(golden, `"alice"`, `"alice\u001b]52;c;ZWNobyBwd25lZA==\u0007"`, 1))
	forged := writeReportFile(t, dir, "eve.json", strings.Replace(strings.Replace(golden, `"alice"`, `"eve"`, 1),
		`"three-pods"`, `"three-pods\r\u001b[2Kstudent000  example-clusterip  3/3  \u2713 1"`, 1))
	bidi := writeReportFile(t, dir, "trudy.json", strings.Replace(golden, `"alice"`, `"\u202eecila"`, 1))
	badName := writeReportFile(t, dir, "oscar\x1b]52;c;eA==\x07.json", strings.Replace(golden, `"three-pods"`, `"Three Pods"`, 1))
	undeclared := writeReportFile(t, dir, "free.json", strings.Replace(golden, `"exercises": [`, `"exercises": [{"name": "free-points", "passed": true, "attempts": 1},`, 1))
	var names []string
	for i := range 24_000 {
		names = append(names, fmt.Sprintf(`{"name":"exercise-name-%05d"}`, i))
	}
	huge := writeReportFile(t, dir, "huge.json", `{"kind":"WorkshopReport","student":"huge","lesson":"example-clusterip","stepsTotal":3,"exercises":[`+strings.Join(names, ",")+`]}`)
	var made []string
	for i := range 300 {
		r := Report{Kind: ReportKind, Student: "wide", Lesson: fmt.Sprintf("made-up-%03d", i), StepsTotal: 1}
		for j := range 50 {
			r.Exercises = append(r.Exercises, ExerciseReport{Name: fmt.Sprintf("e%02d", j), Attempts: 1})
		}
		made = append(made, writeReportFile(t, dir, r.Lesson+".json", mustJSON(t, r)))
	}
	// The example lesson (self-contained) where nobody reads it too.
	lessons := filepath.Join(dir, "lessons")
	if err := os.CopyFS(filepath.Join(lessons, "example-clusterip"), os.DirFS(filepath.Join("..", "..", "clusters", "lessons", "example-clusterip"))); err != nil {
		t.Fatal(err)
	}

	attacks := []struct {
		name    string
		args    []string
		reports []string
		want    string // in the error; "" for a class that is made
	}{
		{"OSC 52 in the student", nil, append(good[:2:2], osc52), `report ` + osc52 + `: student "alice\x1b]52;c;ZWNobyBwd25lZA==\a": '\x1b' is not a letter`},
		{"forged row in an exercise", nil, append(good[:2:2], forged), `report ` + forged + `: exercises[0].name "three-pods\r\x1b[2Kstudent000  example-clusterip  3/3  ✓ 1": a lowercase RFC 1123 label`},
		{"bidi override in the student", nil, append(good[:2:2], bidi), `student "\u202eecila": '\u202e' is not a letter`},
		{"escape in the file name", nil, append(good[:2:2], badName), "report " + filepath.Join(dir, "oscar\uFFFD]52;c;eA==\uFFFD.json") + `: exercises[0].name "Three Pods": a lowercase RFC 1123 label`},
		{"24000 exercises among 300 reports", nil, append(good[:300:300], huge), "report " + huge + ": larger than 64 KiB: not a workshop report"},
		{"300 made-up lessons of 50 exercises", nil, made, "report " + made[4] + ": exercises: the class would have 250 columns"},
		{"a lesson the teacher has not", []string{"--lessons", lessons}, append(good[:2:2], made[0]), "report " + made[0] + `: lesson "made-up-000": no such lesson in ` + lessons + " (it has example-clusterip)"},
		{"an exercise the lesson has not", []string{"--lessons", lessons}, append(good[:2:2], undeclared), "report " + undeclared + `: exercises[0].name "free-points": lesson example-clusterip has no such exercise (it has three-pods)`},
		{"300 good reports", []string{"--lessons", lessons}, good, ""},
	}
	users := []struct {
		name string
		argv func(argv []string) []string
	}{
		{"as the test's user", func(argv []string) []string { return argv }},
		{"as nobody", func(argv []string) []string {
			return append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}, argv...)
		}},
	}
	for _, u := range users {
		for _, a := range attacks {
			for _, output := range []string{"text", "html"} {
				t.Run(u.name+"/"+a.name+"/"+output, func(t *testing.T) {
					if u.name == "as nobody" {
						roottest.Require(t, "switches to the user nobody with setpriv")
					}
					argv := append([]string{myBin, "workshop", "class", "-o", output}, a.args...)
					out, code, rss := runClass(t, dir, u.argv(append(argv, a.reports...)))
					t.Logf("exit %d, %d bytes of output, peak memory %d MiB", code, len(out), rss>>20)
					if what, bad := controlIn(out); bad {
						t.Errorf("the output holds %s:\n%.2000q", what, out)
					}
					if rss > classRSSBound {
						t.Errorf("peak memory %d MiB, over %d MiB", rss>>20, classRSSBound>>20)
					}
					if a.want == "" {
						if code != 0 || strings.Count(out, "student") < 300 {
							t.Errorf("exit %d, want 0 and a row per student:\n%.2000s", code, out)
						}
						return
					}
					if code != 1 || !strings.Contains(out, a.want) {
						t.Errorf("exit %d, want 1 and the error %q:\n%.2000q", code, a.want, out)
					}
					if lines := strings.Count(strings.TrimSpace(out), "\n") + 1; lines > 2 {
						t.Errorf("%d lines, want one error (and the note on lessons):\n%.2000s", lines, out)
					}
				})
			}
		}
	}
}

// runClass runs argv in dir and gives its output (stdout then stderr),
// exit code and peak resident memory; output past classOutputBound ends
// the command and the test.
func runClass(t *testing.T, dir string, argv []string) (string, int, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound, not a wait
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent", "LANG=C.UTF-8"}
	out := &boundedOutput{max: classOutputBound, cancel: cancel}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	if out.over {
		t.Fatalf("%s: more than %d MiB of output (killed):\n%.2000q", strings.Join(argv, " "), classOutputBound>>20, out.buf.String())
	}
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after 2 minutes (killed)", strings.Join(argv, " "))
	}
	rss := int64(0)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // KiB on Linux
	}
	return out.buf.String(), code, rss
}

// boundedOutput keeps at most max bytes; the write past them cancels the
// command.
type boundedOutput struct {
	buf    bytes.Buffer
	max    int
	over   bool
	cancel func()
}

func (c *boundedOutput) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.max {
		c.over = true
		c.cancel()
		return 0, io.ErrShortWrite
	}
	return c.buf.Write(p)
}

func mustJSON(t *testing.T, r Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func writeReportFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}
