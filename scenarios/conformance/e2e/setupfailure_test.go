package e2e

import (
	"encoding/xml"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// junitReport is what this test reads of ginkgo's JUnit report.
type junitReport struct {
	Suites []struct {
		Failures  int `xml:"failures,attr"`
		TestCases []struct {
			Name    string `xml:"name,attr"`
			Status  string `xml:"status,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestSetupFailureIsAFailedTestcaseInJUnit: a cluster that does not
// answer fails the suite's set-up, and the JUnit report is written with
// that failure as a testcase, the reason in it. (This binary runs
// TestConformance again in a child process: ginkgo runs one suite per
// process.)
func TestSetupFailureIsAFailedTestcaseInJUnit(t *testing.T) {
	if flags.Kubeconfig != "" || flags.KindConfig != "" || flags.InCluster {
		t.Skip("a run on a cluster")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	dir := t.TempDir()
	config := filepath.Join(dir, "nowhere.kubeconfig")
	if err := os.WriteFile(config, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+server+`", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "junit.xml")
	child := exec.Command(os.Args[0], "-test.run=^TestConformance$", "-kubeconfig="+config, "-pull-policy=Never",
		"-ginkgo.junit-report="+report, "-ginkgo.no-color")
	out, err := child.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the run on a cluster that does not answer: %v, want it to fail\n%s", err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no JUnit report after a failed set-up: %v\n%s", err, out)
	}
	var r junitReport
	if err := xml.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", report, err)
	}
	for _, s := range r.Suites {
		for _, tc := range s.TestCases {
			if tc.Failure != nil && strings.Contains(tc.Name, "BeforeSuite") {
				for _, want := range []string{server, "does not answer"} {
					if !strings.Contains(tc.Failure.Message+tc.Failure.Text, want) {
						t.Errorf("the failed testcase %q does not say %q:\n%s\n%s", tc.Name, want, tc.Failure.Message, tc.Failure.Text)
					}
				}
				return
			}
		}
	}
	t.Errorf("the JUnit report has no failed set-up testcase:\n%s", data)
}
