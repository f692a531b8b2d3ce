package cli

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/scenarios/conformance/cmdline"
)

// What `svclab conformance` does with the JUnit report once the suite
// ends: -o table prints spec × result × reason from it, -o junit prints
// the report itself (a Job's logs then hold it), --done-file writes its
// path where Sonobuoy's worker waits for it. When the run stops before
// the suite writes a report (the cluster does not answer, no suite
// binary), a report with that failure as its one testcase is written, so
// the report is there whenever one was asked for.

// The -o values of `svclab conformance`.
const (
	outputTable = "table"
	outputJUnit = "junit"
)

// reportOutput is the flags addReportOutput adds, and the temporary
// directory of a report that only -o asked for.
type reportOutput struct {
	format   string
	doneFile string
	tempDir  string
}

// addReportOutput adds -o and --done-file to the conformance command and
// wraps its RunE: a JUnit report is asked of the suite when -o needs one
// and --junit gave none (a temporary file, removed once printed), and the
// report is printed, or its path written, after the run, whatever the
// run's outcome. The command's "report:" line takes its words from the
// returned reportOutput's describe.
func addReportOutput(cmd *cobra.Command, f *cmdline.Flags) *reportOutput {
	o := &reportOutput{}
	fl := cmd.Flags()
	fl.StringVarP(&o.format, "output", "o", "", "after the run, also print the JUnit report's results: table (spec, result, reason) or junit (the report itself, e.g. into a Job's log)")
	fl.StringVar(&o.doneFile, "done-file", "", "after the run, write the --junit report's path to this file (Sonobuoy's plugin contract: $SONOBUOY_RESULTS_DIR/done)")
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{outputTable, outputJUnit}, cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := o.prepare(f); err != nil {
			return err
		}
		defer o.removeTemporary()
		err := run(cmd, args)
		if f.DryRun { // no spec ran: no report
			return err
		}
		return o.finish(cmd, f.JUnit, err)
	}
	return o
}

// describe is what the run's "report:" line says of the report junit.
func (o *reportOutput) describe(junit string) string {
	if o.tempDir != "" {
		return "printed below by -o " + o.format + ", not kept (--junit FILE keeps it)"
	}
	return orNone(junit)
}

// removeTemporary removes the report that only -o asked for, once printed.
func (o *reportOutput) removeTemporary() {
	if o.tempDir != "" {
		os.RemoveAll(o.tempDir) //nolint:errcheck // a temporary directory of svclab's own; nothing else to do
		o.tempDir = ""
	}
}

// prepare checks the flags and, when -o needs a report and --junit names
// none, names a temporary one.
func (o *reportOutput) prepare(f *cmdline.Flags) error {
	switch o.format {
	case "", outputTable, outputJUnit:
	default:
		return fmt.Errorf("-o %q: want %s or %s", o.format, outputTable, outputJUnit)
	}
	if o.doneFile != "" && f.JUnit == "" {
		return errors.New("--done-file needs --junit: the done file names the report")
	}
	if o.format != "" && f.JUnit == "" && !f.DryRun {
		dir, err := os.MkdirTemp("", "svclab-conformance-")
		if err != nil {
			return err
		}
		o.tempDir, f.JUnit = dir, filepath.Join(dir, "junit.xml")
	}
	return nil
}

// finish runs after the suite: a report for a run that never reached the
// suite, then the -o output and the done file. runErr, the run's own
// outcome, is what it returns, unless the output fails after a run that
// passed.
func (o *reportOutput) finish(cmd *cobra.Command, junit string, runErr error) error {
	if junit == "" {
		return runErr
	}
	var code exitCode
	if runErr != nil && !errors.As(runErr, &code) {
		if _, err := os.Stat(junit); errors.Is(err, os.ErrNotExist) {
			if err := writeNotRunJUnit(junit, runErr); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: writing the JUnit report %s: %v\n", junit, err)
			}
		}
	}
	outErr := o.print(cmd.OutOrStdout(), junit)
	if o.doneFile != "" {
		if err := os.WriteFile(o.doneFile, []byte(junit), 0o644); err != nil && outErr == nil {
			outErr = fmt.Errorf("--done-file: %w", err)
		}
	}
	if outErr != nil {
		if runErr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "error: %v\n", outErr)
			return runErr
		}
		return outErr
	}
	return runErr
}

// print writes what -o asks for, read from the report.
func (o *reportOutput) print(w io.Writer, junit string) error {
	switch o.format {
	case outputTable:
		rows, err := readJUnitFile(junit)
		if err != nil {
			return err
		}
		return writeResultTable(w, rows)
	case outputJUnit:
		f, err := os.Open(junit)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxJUnitBytes+1))
		if err != nil {
			return err
		}
		if len(data) > maxJUnitBytes {
			return fmt.Errorf("JUnit report %s: larger than %d MiB", junit, maxJUnitBytes>>20)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			data = append(data, '\n')
		}
		_, err = w.Write(data)
		return err
	}
	return nil
}

// notRunSpec names the one testcase of a report for a run that stopped
// before the suite started.
const notRunSpec = "svclab conformance: before the suite started"

// writeNotRunJUnit writes a JUnit report whose one testcase failed with
// why the run stopped before the suite.
func writeNotRunJUnit(path string, why error) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name    string  `xml:"name,attr"`
		Status  string  `xml:"status,attr"`
		Failure failure `xml:"failure"`
	}
	type testsuite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	report := struct {
		XMLName  xml.Name    `xml:"testsuites"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Suites   []testsuite `xml:"testsuite"`
	}{Tests: 1, Failures: 1, Suites: []testsuite{{
		Name: "svclab conformance", Tests: 1, Failures: 1,
		Cases: []testcase{{Name: notRunSpec, Status: resultFailed, Failure: failure{Message: why.Error(), Type: resultFailed, Text: why.Error()}}},
	}}}
	data, err := xml.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(xml.Header+strings.TrimSpace(string(data))+"\n"), 0o644)
}
