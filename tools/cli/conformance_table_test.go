package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/golden"
)

// TestConformanceTableGolden: a JUnit report as ginkgo writes it — passed,
// failed with a multi-line message, skipped with and without a reason,
// panicked, pending — as spec × result × reason; the [BeforeSuite] that
// passed is no row.
func TestConformanceTableGolden(t *testing.T) {
	rows, err := readJUnitFile(filepath.Join("testdata", "conformance-junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeResultTable(&out, rows); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "conformance-table.golden", out.Bytes())
}

// TestReadJUnitRefuses: what is not a JUnit report with testcases, and a
// report over the bound, are errors that say so.
func TestReadJUnitRefuses(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "not JUnit XML",
		"<html><body/></html>":              "the document is <html>",
		"<testsuites></testsuites>":         "no testcase",
		"<testsuites><testsuite>":           "not JUnit XML",
		"<testsuite><testcase name='a'/>":   "not JUnit XML",
		"\xff\xfe<testsuites></testsuites>": "not JUnit XML",
	} {
		if _, err := readJUnit(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("readJUnit(%q): %v, want an error with %q", in, err, want)
		}
	}
	big := "<testsuite><testcase name='" + strings.Repeat("a", maxJUnitBytes) + "'/></testsuite>"
	if _, err := readJUnit(strings.NewReader(big)); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("a report over the bound: %v", err)
	}
	rows, err := readJUnit(strings.NewReader(`<testsuite><testcase name="[It] lone suite" status="passed"/></testsuite>`))
	if err != nil || len(rows) != 1 || rows[0] != (specResult{Spec: "lone suite", Result: resultPassed}) {
		t.Errorf("a lone <testsuite>: %v, %v", rows, err)
	}
}

// FuzzReadJUnit: whatever the bytes, reading them as a JUnit report does
// not panic, and a report read is a table of one line per testcase, with
// no cell that breaks a line.
func FuzzReadJUnit(f *testing.F) {
	sample, err := os.ReadFile(filepath.Join("testdata", "conformance-junit.xml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add([]byte(`<testsuite><testcase name="a&#xA;b&#x9;c" status="x&#xA;y"><failure message=""/></testcase></testsuite>`))
	f.Add([]byte(`<testsuites><testsuite><testcase name="[It] s"><skipped message="skipped - why&#xA;more"/></testcase></testsuite></testsuites>`))
	f.Add([]byte(`<testsuites><testsuite><testcase status="timedout"><failure message="&#xA;&#xA;late"/></testcase></testsuite></testsuites>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := readJUnit(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range rows {
			for _, cell := range []string{r.Spec, r.Result, r.Reason} {
				if strings.ContainsAny(cell, "\n\t") {
					t.Fatalf("a cell breaks the table: %q", cell)
				}
			}
		}
		var out bytes.Buffer
		if err := writeResultTable(&out, rows); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(out.String(), "\n"); lines != len(rows)+2 {
			t.Fatalf("%d rows gave %d lines:\n%s", len(rows), lines, out.String())
		}
	})
}
