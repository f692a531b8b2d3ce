package cli

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// `svclab conformance -o table`: spec × result × reason, read from the
// JUnit report the run wrote (ginkgo's reporters/junit_report.go), like
// the per-backend skip lists Kubernetes' proxy projects publish.

// maxJUnitBytes bounds the JUnit report read: a failed spec's evidence
// makes a report bigger, but never near this.
const maxJUnitBytes = 64 << 20

// junitReport is what the table reads of a JUnit report: a <testsuites>
// document, or a lone <testsuite> (both are JUnit).
type junitReport struct {
	XMLName xml.Name
	Suites  []junitSuite `xml:"testsuite"`
	junitSuite
}

type junitSuite struct {
	TestCases []junitTestCase `xml:"testcase"`
}

// junitTestCase is one spec: ginkgo writes its state as status, and a
// <failure> (failed, timed out, aborted), an <error> (panicked,
// interrupted) or a <skipped> (skipped: "skipped - REASON"; pending).
type junitTestCase struct {
	Name    string        `xml:"name,attr"`
	Status  string        `xml:"status,attr"`
	Failure *junitMessage `xml:"failure"`
	Error   *junitMessage `xml:"error"`
	Skipped *junitMessage `xml:"skipped"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
}

// specResult is one row of the table.
type specResult struct {
	Spec, Result, Reason string
}

// The results a row has.
const (
	resultPassed  = "passed"
	resultFailed  = "failed"
	resultSkipped = "skipped"
)

// readJUnitFile reads the JUnit report at path (at most maxJUnitBytes).
func readJUnitFile(path string) ([]specResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	results, err := readJUnit(f)
	if err != nil {
		return nil, fmt.Errorf("JUnit report %s: %w", path, err)
	}
	return results, nil
}

// readJUnit reads a JUnit report's testcases as table rows, in order;
// the suite's set-up and cleanup only when they failed.
func readJUnit(r io.Reader) ([]specResult, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxJUnitBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJUnitBytes {
		return nil, fmt.Errorf("larger than %d MiB", maxJUnitBytes>>20)
	}
	var report junitReport
	if err := xml.Unmarshal(data, &report); err != nil {
		return nil, fmt.Errorf("not JUnit XML: %w", err)
	}
	var cases []junitTestCase
	switch report.XMLName.Local {
	case "testsuites":
		for _, s := range report.Suites {
			cases = append(cases, s.TestCases...)
		}
	case "testsuite":
		cases = report.TestCases
	default:
		return nil, fmt.Errorf("the document is <%s>, not <testsuites> or <testsuite>", report.XMLName.Local)
	}
	if len(cases) == 0 {
		return nil, errors.New("no testcase in it")
	}
	var out []specResult
	for _, tc := range cases {
		row := tc.result()
		if row.Result == resultPassed && isSuiteNode(tc.Name) {
			continue // a set-up or cleanup that passed is no spec
		}
		out = append(out, row)
	}
	return out, nil
}

// isSuiteNode says whether a testcase is one of ginkgo's suite-level
// nodes ("[BeforeSuite]", "[DeferCleanup (Suite)]", …) rather than a spec
// ("[It] …").
func isSuiteNode(name string) bool {
	return strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") && strings.Contains(name, "Suite")
}

// result is the testcase's row: its spec without ginkgo's "[It] ", and
// passed, failed (with the first line of the failure) or skipped (with
// the skip's reason).
func (tc junitTestCase) result() specResult {
	row := specResult{Spec: oneLine(strings.TrimPrefix(tc.Name, "[It] "))}
	switch {
	case tc.Failure != nil:
		row.Result, row.Reason = resultFailed, failureReason(tc.Failure, tc.Status)
	case tc.Error != nil:
		row.Result, row.Reason = resultFailed, failureReason(tc.Error, tc.Status)
	case tc.Skipped != nil:
		row.Result = resultSkipped
		reason := strings.TrimPrefix(strings.TrimPrefix(tc.Skipped.Message, "skipped"), " - ")
		row.Reason = oneLine(reason)
	case tc.Status == "" || tc.Status == resultPassed:
		row.Result = resultPassed
	default: // a state without its element
		row.Result = oneLine(tc.Status)
	}
	return row
}

// failureReason is the first non-empty line of the message, with the
// state when it is not a plain failure ("timedout: …").
func failureReason(m *junitMessage, status string) string {
	reason := ""
	for _, line := range strings.Split(m.Message, "\n") {
		if line = oneLine(line); line != "" {
			reason = line
			break
		}
	}
	if status = oneLine(status); status != "" && status != resultFailed {
		if reason == "" {
			return status
		}
		return status + ": " + reason
	}
	return reason
}

// oneLine is s with its line breaks and tabs as blanks (a table cell).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// writeResultTable writes the rows as a table, SPEC RESULT REASON, and a
// count of each result.
func writeResultTable(w io.Writer, rows []specResult) error {
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SPEC\tRESULT\tREASON")
	counts := map[string]int{}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Spec, r.Result, r.Reason)
		counts[r.Result]++
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		b.WriteString(strings.TrimRight(strings.TrimSuffix(line, "\n"), " "))
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "%d specs: %d passed, %d failed, %d skipped\n", len(rows), counts[resultPassed], counts[resultFailed], counts[resultSkipped])
	_, err := io.WriteString(w, b.String())
	return err
}
