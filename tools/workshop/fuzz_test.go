package workshop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse decodes and validates any document: it gives a lesson or one
// single-line *Error naming the source, never a panic; every template of
// an accepted lesson expands against placeholder facts, and every
// expectation then compiles.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	bad, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	lessons, _ := filepath.Glob(filepath.Join("..", "..", "clusters", "lessons", "*", FileName))
	for _, p := range append(append(seeds, bad...), lessons...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("spec: {steps: [{name: 7, run: [{svclab: []}]}]}")
	f.Add("- a\n")
	f.Fuzz(func(t *testing.T, doc string) {
		l, err := Parse([]byte(doc), "fuzz.yaml")
		if err != nil {
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v (%T): want a *workshop.Error", err, err)
			}
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "lesson fuzz.yaml:") {
				t.Fatalf("error %q: want one line naming the source", err)
			}
			return
		}
		for _, st := range l.Spec.Steps {
			for _, e := range st.Expect {
				for _, p := range []string{e.Output, e.Absent} {
					s, err := Expand(p, placeholderFacts{})
					if err != nil {
						t.Fatalf("accepted expectation %q does not expand: %v", p, err)
					}
					if _, err := matches(s, "x"); err != nil {
						t.Fatalf("accepted expectation %q: %v", p, err)
					}
				}
			}
		}
	})
}
