package workshop

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzDecodeReport decodes any document as a student's report: it gives a
// report or one printable single-line *Error naming the source, never a
// panic; an accepted report holds only names that are names, within the
// bounds, and the class table of it (text and HTML) is printable. Seeds:
// testdata/fuzz/FuzzDecodeReport (hostile reports: OSC 52, a forged row,
// bidi overrides, C1 controls, too many exercises) and the golden report.
func FuzzDecodeReport(f *testing.F) {
	good := goodReport(f)
	f.Add([]byte(good))
	f.Add([]byte(strings.Replace(good, `"alice"`, `"alice\u001b]52;c;cHduZWQ=\u0007"`, 1)))
	f.Add([]byte(`{"kind":"WorkshopReport","student":"a","lesson":"b","exercises":[{"name":"c","attempts":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeReport(data, "fuzz.json")
		if err != nil {
			checkReportError(t, err, "fuzz.json", "")
			return
		}
		if p := studentProblem(r.Student); p != "" {
			t.Fatalf("accepted student %q: %s", r.Student, p)
		}
		if len(r.Exercises) > maxExercises {
			t.Fatalf("accepted %d exercises", len(r.Exercises))
		}
		for _, name := range append([]string{r.Lesson}, exerciseNames(r)...) {
			if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
				t.Fatalf("accepted name %q: %s", name, errs[0])
			}
		}
		c := NewClass([]Report{r, r})
		var text, html, rep bytes.Buffer
		if err := c.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteHTML(&html); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteText(&rep); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"class text": text.String(), "class html": html.String(), "report text": rep.String()} {
			if what, bad := controlIn(out); bad {
				t.Fatalf("%s of an accepted report holds %s:\n%q", name, what, out)
			}
		}
	})
}

func exerciseNames(r Report) []string {
	var names []string
	for _, e := range r.Exercises {
		names = append(names, e.Name)
	}
	return names
}
