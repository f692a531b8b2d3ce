package bars

import (
	"bytes"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/agents/traffic"
)

// FuzzBars builds a Result from the bytes (backend names, their counts, the
// expected split, failures) and checks both renderers: the text has its
// head lines, two lines per backend, the scale line and the summary lines,
// with no control character but the colour escapes; the SVG is valid XML
// whose root is an svg element and which names every backend.
func FuzzBars(f *testing.F) {
	f.Add("10.96.0.11:80", "web-1,web-2,web-3", []byte{103, 96, 101}, "", uint8(0), false)
	f.Add("10.96.0.20:80", "heavy,light", []byte{200, 70}, "heavy=3,light", uint8(0), false)
	f.Add("10.96.0.10:80", "web-1,web-2,stray", []byte{45, 44, 1}, "web-1,web-2,web-3", uint8(2), true)
	f.Add("x", "", []byte{}, "", uint8(5), false)
	f.Add("<&>", "\x00\x1b[2J,<svg>,]]>", []byte{1, 0, 255}, "\x1b=1", uint8(1), true)
	f.Fuzz(func(t *testing.T, target, names string, counts []byte, expected string, failed uint8, deadline bool) {
		res := traffic.Result{Target: target, Backends: map[string]int{}, Failures: map[traffic.FailureKind]int{}}
		for i, name := range strings.Split(names, ",") {
			if i < len(counts) && name != "" {
				res.Backends[name] += int(counts[i])
				res.Succeeded += int(counts[i])
			}
		}
		if expected != "" {
			res.Expected = strings.Split(expected, ",")
		}
		res.Failures[traffic.FailureTimeout] = int(failed)
		res.Attempted = res.Succeeded + int(failed)
		res.Requested = res.Attempted
		if deadline {
			res.Requested++
			res.DeadlineExceeded = true
		}
		rep := res.Report()

		var text bytes.Buffer
		if err := WriteText(&text, rep, true); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
		want := len(rep.HeadLines()) + len(rep.SummaryLines())
		if len(rep.Backends) > 0 {
			want += 2*len(rep.Backends) + 1
		}
		if len(lines) != want {
			t.Errorf("text has %d lines, want %d:\n%s", len(lines), want, text.String())
		}
		plain := strings.ReplaceAll(text.String(), "\033[", "")
		for _, r := range plain {
			if r < ' ' && r != '\n' {
				t.Fatalf("text carries control character %q:\n%q", r, text.String())
			}
		}

		var svg bytes.Buffer
		if err := WriteSVG(&svg, rep); err != nil {
			t.Fatal(err)
		}
		texts, _, err := parseSVG(svg.Bytes())
		if err != nil {
			t.Fatalf("SVG is not valid: %v\n%s", err, svg.String())
		}
		joined := strings.Join(texts, "\n")
		for _, be := range rep.Backends {
			if !strings.Contains(joined, strings.TrimSpace(esc(shortName(be.Backend)))) && !strings.Contains(joined, strings.TrimSpace(shortName(be.Backend))) {
				t.Errorf("SVG does not name backend %q", be.Backend)
			}
		}
	})
}
