package traffic

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Output formats for Report.Write.
const (
	FormatTable = "table"
	FormatJSON  = "json"
)

// Write writes the report in format: "table" (or "") for people, "json"
// for programs (`svclab traffic -o json`).
func (r Report) Write(w io.Writer, format string) error {
	switch format {
	case "", FormatTable:
		return r.WriteTable(w)
	case FormatJSON:
		return r.WriteJSON(w)
	default:
		return fmt.Errorf("traffic report: output format %q: want %s or %s", format, FormatTable, FormatJSON)
	}
}

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for people:
//
//	10.96.0.10:80: 2326 connections, 2326 succeeded, 0 failed in 1.2s
//	BACKEND  COUNT  SHARE   EXPECTED
//	web-1    1170   50.3%   50.0%
//	web-2    1156   49.7%   50.0%
//	chi-square 0.0843 on 1 degree of freedom: p-value 0.7716 (uniform over the observed backends)
//	PASS at alpha 1e-06
func (r Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	for _, line := range r.HeadLines() {
		b.WriteString(line + "\n")
	}
	if len(r.Backends) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "BACKEND\tCOUNT\tSHARE\tEXPECTED")
		for _, be := range r.Backends {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", be.Backend, be.Count, Percent(be.Share), Percent(be.Expected))
		}
		tw.Flush()
	}
	for _, line := range r.SummaryLines() {
		b.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// HeadLines are the lines a report starts with, before the backends: the
// target and how many connections succeeded and failed, and whether the
// deadline cut the run short. Every output for people (the table, the bars)
// starts with them.
func (r Report) HeadLines() []string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d connections, %d succeeded, %d failed", r.Target, r.Attempted, r.Succeeded, r.Failed)
	if r.Failed > 0 {
		var kinds []string
		for _, kind := range FailureKinds {
			if n := r.Failures[kind]; n > 0 {
				kinds = append(kinds, fmt.Sprintf("%s %d", kind, n))
			}
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintf(&b, " in %s", r.Elapsed.Round(time.Millisecond))
	lines := []string{b.String()}
	if r.DeadlineExceeded {
		lines = append(lines, fmt.Sprintf("deadline reached: %d of %d connections not attempted", r.Requested-r.Attempted, r.Requested))
	}
	return lines
}

// SummaryLines are the lines a report ends with, after the backends: the
// chi-square test and its p-value, the missing and unexpected backends,
// and the verdict.
func (r Report) SummaryLines() []string {
	var lines []string
	over := r.ExpectedDescription()
	switch {
	case r.PValue == nil:
		lines = append(lines, "p-value: n/a (no successful connection)")
	case r.ChiSquare == nil:
		lines = append(lines, fmt.Sprintf("chi-square infinite (unexpected backend): p-value 0 (%s)", over))
	default:
		lines = append(lines, fmt.Sprintf("chi-square %.4g on %d degree%s of freedom: p-value %s (%s)",
			*r.ChiSquare, r.DegreesOfFreedom, plural(r.DegreesOfFreedom), formatP(*r.PValue), over))
	}
	if len(r.Missing) > 0 {
		lines = append(lines, "missing (no connection): "+strings.Join(r.Missing, ", "))
	}
	if len(r.Unexpected) > 0 {
		lines = append(lines, "unexpected: "+strings.Join(r.Unexpected, ", "))
	}
	if r.Verdict != "" {
		lines = append(lines, r.VerdictLine())
	}
	return lines
}

// VerdictLine is "PASS at alpha A" or "FAIL at alpha A: why".
func (r Report) VerdictLine() string {
	if r.Passed() {
		return fmt.Sprintf("PASS at alpha %g", r.Alpha)
	}
	return fmt.Sprintf("FAIL at alpha %g: %s", r.Alpha, r.VerdictReason)
}

// ExpectedDescription says what the expected shares are: uniform over the
// observed or the expected backends, or the expected weights.
func (r Report) ExpectedDescription() string {
	if r.ExpectedFrom != "expected" {
		return "uniform over the observed backends"
	}
	if r.weighted() {
		return "the expected weights"
	}
	return "uniform over the expected backends"
}

// weighted reports whether the expected backends have unequal shares.
func (r Report) weighted() bool {
	for _, be := range r.Backends {
		if be.Expected > 0 && math.Abs(be.Expected-r.Backends[0].Expected) > 1e-12 {
			return true
		}
	}
	return false
}

// Percent formats a share as the reports print it: "33.3%".
func Percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func formatP(p float64) string {
	if p != 0 && p < 1e-4 {
		return strconv.FormatFloat(p, 'e', 2, 64)
	}
	return strconv.FormatFloat(p, 'f', 4, 64)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
