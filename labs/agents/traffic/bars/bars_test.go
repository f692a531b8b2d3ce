package bars

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/labs/agents/traffic"
)

// cases are Results whose reports cover what the bars must show: a fair
// 3-way split, a weighted split, a missing and an unexpected backend,
// failures and a deadline, and no success at all.
var cases = []struct {
	name string
	res  traffic.Result
}{
	{"uniform-pass", traffic.Result{Target: "10.96.0.11:80", Requested: 300, Attempted: 300, Succeeded: 300,
		Backends: map[string]int{"web-6b4f-abcde": 103, "web-6b4f-fghij": 96, "web-6b4f-klmno": 101}, Elapsed: 212 * time.Millisecond}},
	{"weighted", traffic.Result{Target: "10.96.0.20:80", Requested: 400, Attempted: 400, Succeeded: 400,
		Expected: []string{"heavy=3", "light"}, Backends: map[string]int{"heavy": 296, "light": 104}, Elapsed: time.Second}},
	{"missing-unexpected", traffic.Result{Target: "10.96.0.10:80", Requested: 90, Attempted: 90, Succeeded: 90,
		Expected: []string{"web-1", "web-2", "web-3"}, Backends: map[string]int{"web-1": 45, "web-2": 44, "stray": 1}}},
	{"failures-deadline", traffic.Result{Target: "192.168.16.73:30080", Requested: 100, Attempted: 60, Succeeded: 57,
		DeadlineExceeded: true, Backends: map[string]int{"only": 57}, Failures: map[traffic.FailureKind]int{traffic.FailureTimeout: 3}}},
	{"no-success", traffic.Result{Target: "10.96.0.12:80", Requested: 5, Attempted: 5,
		Backends: map[string]int{}, Failures: map[traffic.FailureKind]int{traffic.FailureRefused: 5}}},
	{"hostile-name", traffic.Result{Target: "10.96.0.13:80", Requested: 2, Attempted: 2, Succeeded: 2,
		Backends: map[string]int{"<b>&\"x\"\x1b[31m": 1, strings.Repeat("long-", 12): 1}}},
}

// TestGolden compares each case's whole text (plain and coloured) and SVG
// output with testdata/NAME.{txt,color.txt,svg}.golden.
func TestGolden(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := c.res.Report()
			var plain, color, svg bytes.Buffer
			if err := WriteText(&plain, rep, false); err != nil {
				t.Fatal(err)
			}
			if err := WriteText(&color, rep, true); err != nil {
				t.Fatal(err)
			}
			if err := WriteSVG(&svg, rep); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, c.name+".txt", plain.Bytes())
			checkGolden(t, c.name+".color.txt", color.Bytes())
			checkGolden(t, c.name+".svg", svg.Bytes())
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, name+".golden", got)
}

// TestTextShowsEveryBackendAgainstItsExpectedShare: per backend a solid bar
// whose length is its share of the scale, and under it a shaded bar of its
// expected share; no ANSI escape without colour, and the table's head and
// summary lines are kept.
func TestTextShowsEveryBackendAgainstItsExpectedShare(t *testing.T) {
	rep := cases[1].res.Report() // heavy 296 (74%), light 104 (26%); expected 75/25; scale 80%
	var out bytes.Buffer
	if err := WriteText(&out, rep, false); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if strings.Contains(text, "\033") {
		t.Errorf("escape sequences without colour:\n%s", text)
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if lines[0] != rep.HeadLines()[0] || lines[len(lines)-1] != "PASS at alpha 1e-06" {
		t.Errorf("head or verdict line missing:\n%s", text)
	}
	heavy, heavyExpected := lines[1], lines[2]
	// 0.74/0.8 of 40 cells = 37 cells exactly; 0.75/0.8 of 40 = 37.5 → 38 shaded.
	if got := strings.Count(heavy, "█"); got != 37 || !strings.HasPrefix(heavy, "heavy") || !strings.HasSuffix(heavy, "74.0%  296") {
		t.Errorf("heavy's bar has %d full blocks, want 37: %q", got, heavy)
	}
	if got := strings.Count(heavyExpected, "░"); got != 38 || !strings.HasSuffix(heavyExpected, "75.0%  expected") {
		t.Errorf("heavy's expected bar has %d cells, want 38: %q", got, heavyExpected)
	}
	if !strings.Contains(text, "0%") || !strings.Contains(text, "80%\n") {
		t.Errorf("the scale line lacks its ends:\n%s", text)
	}
}

// TestScale: the smallest multiple of 10% holding every share.
func TestScale(t *testing.T) {
	for _, c := range []struct {
		shares []float64
		want   float64
	}{
		{nil, 0.1}, {[]float64{0}, 0.1}, {[]float64{0.3333, 0.3334}, 0.4}, {[]float64{0.4}, 0.4},
		{[]float64{0.5, 0.5}, 0.5}, {[]float64{1}, 1}, {[]float64{0.01}, 0.1}, {[]float64{0.91}, 1},
	} {
		var rep traffic.Report
		for _, s := range c.shares {
			rep.Backends = append(rep.Backends, traffic.BackendShare{Share: s, Expected: s / 2})
		}
		if got := Scale(rep); got != c.want {
			t.Errorf("Scale(%v) = %g, want %g", c.shares, got, c.want)
		}
	}
}

// TestSVGIsValidAndNamesEveryBackend parses each case's SVG with
// encoding/xml and finds an <svg> root, every backend's name as text, its
// bars, and the verdict.
func TestSVGIsValidAndNamesEveryBackend(t *testing.T) {
	for _, c := range cases {
		rep := c.res.Report()
		var out bytes.Buffer
		if err := WriteSVG(&out, rep); err != nil {
			t.Fatal(err)
		}
		texts, elems, err := parseSVG(out.Bytes())
		if err != nil {
			t.Fatalf("%s: not valid XML: %v\n%s", c.name, err, out.String())
		}
		joined := strings.Join(texts, "\n")
		for _, be := range rep.Backends {
			if !strings.Contains(joined, shortName(be.Backend)) {
				t.Errorf("%s: no text names backend %q", c.name, be.Backend)
			}
		}
		if !strings.Contains(joined, rep.VerdictLine()) {
			t.Errorf("%s: verdict %q not drawn", c.name, rep.VerdictLine())
		}
		wantRects := 1 // the background
		for _, be := range rep.Backends {
			if be.Share > 0 {
				wantRects++
			}
			if be.Expected > 0 {
				wantRects++
			}
		}
		if got := elems["rect"] - 2; got != wantRects { // minus the legend's two swatches
			t.Errorf("%s: %d rects besides the legend, want %d", c.name, got, wantRects)
		}
	}
}

// parseSVG decodes an SVG document and returns its text nodes and how many
// elements of each name it has; the root must be svg in the SVG namespace.
func parseSVG(data []byte) (texts []string, elems map[string]int, err error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	elems = map[string]int{}
	root := true
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return texts, elems, nil
		}
		if err != nil {
			return nil, nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root && (tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg") {
				return nil, nil, errors.New("root is not an SVG svg element: " + tok.Name.Space + " " + tok.Name.Local)
			}
			root = false
			elems[tok.Name.Local]++
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				texts = append(texts, s)
			}
		}
	}
}
