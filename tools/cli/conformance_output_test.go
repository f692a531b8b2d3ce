package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/scenarios/conformance/cmdline"
)

// reportingSuite is a conformance binary that copies the sample JUnit
// report (testdata/conformance-junit.xml) to the path of its
// -ginkgo.junit-report= argument, prints a line and exits with code.
func reportingSuite(t *testing.T, code string) string {
	t.Helper()
	sample, err := filepath.Abs(filepath.Join("testdata", "conformance-junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), cmdline.Binary)
	script := "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in -ginkgo.junit-report=*) cp " + sample + " \"${a#-ginkgo.junit-report=}\";; esac; done\n" +
		"echo suite output\nexit " + code + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestConformanceOutputTable: -o table without --junit asks the suite
// for a report in a temporary file, prints its table after the run,
// failed or not, and removes the file; the suite's exit status is kept.
func TestConformanceOutputTable(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the temporary report's, watched for leftovers
	kubeconfig := fakeCluster(t)
	t.Setenv(cmdline.BinaryEnv, reportingSuite(t, "1"))
	out, err := runConformance("--kubeconfig", kubeconfig, "-o", "table")
	var code exitCode
	if !errors.As(err, &code) || code != 1 {
		t.Fatalf("a failing suite with -o table: %v, want its exit status 1\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "conformance-table.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, string(want)) {
		t.Errorf("the output does not end with the table:\n%s", out)
	}
	if !strings.Contains(out, "suite output") || !strings.Contains(out, "conformance failed (report: printed below by -o table, not kept") {
		t.Errorf("the run's own output, and what it says of the report:\n%s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "svclab-conformance-*")); len(left) > 0 {
		t.Errorf("the temporary report is left: %v", left)
	}
}

// TestConformanceOutputJUnitAndDoneFile: -o junit prints the report at
// the end of the output (a Job's log); --done-file holds the report's
// path (Sonobuoy's contract), and needs --junit.
func TestConformanceOutputJUnitAndDoneFile(t *testing.T) {
	kubeconfig := fakeCluster(t)
	t.Setenv(cmdline.BinaryEnv, reportingSuite(t, "0"))
	dir := t.TempDir()
	junit, done := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "done")
	out, err := runConformance("--kubeconfig", kubeconfig, "--junit", junit, "-o", "junit", "--done-file", done)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sample, _ := os.ReadFile(filepath.Join("testdata", "conformance-junit.xml"))
	if i := strings.Index(out, "<?xml"); i < 0 || out[i:] != string(sample) {
		t.Errorf("the output does not end with the report:\n%s", out)
	}
	if got, err := os.ReadFile(done); err != nil || string(got) != junit {
		t.Errorf("done file: %q, %v; want %q", got, err, junit)
	}
	if _, err := runConformance("--kubeconfig", kubeconfig, "--done-file", done); err == nil || !strings.Contains(err.Error(), "--done-file needs --junit") {
		t.Errorf("--done-file without --junit: %v", err)
	}
	if _, err := runConformance("--kubeconfig", kubeconfig, "-o", "yaml"); err == nil || !strings.Contains(err.Error(), `-o "yaml": want table or junit`) {
		t.Errorf("-o yaml: %v", err)
	}
}

// TestConformanceReportWhenTheSuiteNeverRan: a cluster that does not
// answer stops the run before the suite; the report asked for is still
// written, its one testcase failed with the reason, and the table and
// the done file say so.
func TestConformanceReportWhenTheSuiteNeverRan(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "nowhere.kubeconfig")
	os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600)
	junit, done := filepath.Join(dir, "r", "junit.xml"), filepath.Join(dir, "done")
	out, err := runConformance("--kubeconfig", kubeconfig, "--junit", junit, "-o", "table", "--done-file", done)
	if err == nil {
		t.Fatalf("a cluster that does not answer: no error\n%s", out)
	}
	rows, rerr := readJUnitFile(junit)
	if rerr != nil {
		t.Fatalf("no report: %v", rerr)
	}
	if len(rows) != 1 || rows[0].Spec != notRunSpec || rows[0].Result != resultFailed || !strings.Contains(rows[0].Reason, "127.0.0.1:1") {
		t.Errorf("report rows %+v, want one failed testcase naming the server", rows)
	}
	if !strings.Contains(out, notRunSpec) || !strings.Contains(out, "1 specs: 0 passed, 1 failed, 0 skipped") {
		t.Errorf("the table:\n%s", out)
	}
	if got, _ := os.ReadFile(done); string(got) != junit {
		t.Errorf("done file %q, want %q", got, junit)
	}
}
