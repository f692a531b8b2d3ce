package cli

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/scenarios/conformance/cmdline"
)

// fakeCluster is an API server that answers the node list with one node,
// and a kubeconfig file for it.
func fakeCluster(t *testing.T) (kubeconfig string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/nodes" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"n1"}}]}`))
	}))
	t.Cleanup(srv.Close)
	kubeconfig = filepath.Join(t.TempDir(), "fake.kubeconfig")
	os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+srv.URL+`"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600)
	return kubeconfig
}

// fakeSuite is a conformance binary that writes its arguments to a file
// and a line to its output, and exits with code.
func fakeSuite(t *testing.T, code string) (bin, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	bin, argsFile = filepath.Join(dir, cmdline.Binary), filepath.Join(dir, "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\necho suite output\nexit " + code + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, argsFile
}

func runConformance(args ...string) (string, error) {
	cmd := newConformance()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	return out.String(), err
}

// TestConformanceRunsTheSuiteBinary: the flags become the binary's
// command line, its output streams through, and its exit status is
// passed on with the "conformance failed/passed (report: …)" line.
func TestConformanceRunsTheSuiteBinary(t *testing.T) {
	kubeconfig := fakeCluster(t)

	bin, argsFile := fakeSuite(t, "0")
	t.Setenv(cmdline.BinaryEnv, bin)
	out, err := runConformance("--kubeconfig", kubeconfig, "--junit", "/r/junit.xml", "--focus", "split", "--pull-policy", "Never", "--ip-family", "dual", "-v")
	if err != nil {
		t.Fatalf("passing suite: %v\n%s", err, out)
	}
	if !strings.Contains(out, "suite output") || !strings.Contains(out, "conformance passed (report: /r/junit.xml)") {
		t.Errorf("passing suite: output %q", out)
	}
	data, _ := os.ReadFile(argsFile)
	for _, want := range []string{"-kubeconfig=" + kubeconfig, "-pull-policy=Never", "-image=" + cmdline.DefaultImage,
		"-ginkgo.junit-report=/r/junit.xml", "-ginkgo.focus=split", "-ginkgo.v", "-ginkgo.timeout=1h0m0s", "-ip-family=dual"} {
		if !strings.Contains("\n"+string(data), "\n"+want+"\n") {
			t.Errorf("the suite's arguments %q lack %q", data, want)
		}
	}

	if out, err := runConformance("--kubeconfig", kubeconfig, "--ip-family", "IPv6"); err == nil || !strings.Contains(err.Error(), `--ip-family "IPv6": want ipv4, ipv6 or dual`) {
		t.Errorf("--ip-family IPv6 (kind's values are lower case): err %v\n%s", err, out)
	}

	bin, _ = fakeSuite(t, "3")
	t.Setenv(cmdline.BinaryEnv, bin)
	out, err = runConformance("--kubeconfig", kubeconfig)
	var code exitCode
	if !errors.As(err, &code) || code != 3 {
		t.Errorf("failing suite (exit 3): error %v, want exit status 3", err)
	}
	if !strings.Contains(out, "suite output") || !strings.Contains(out, "conformance failed (report: none, no --junit)") {
		t.Errorf("failing suite: output %q", out)
	}
}

// TestConformanceFindsTheKubeconfigAsKubectl: without --kubeconfig, the
// file $KUBECONFIG names, else ~/.kube/config, reaches the suite.
func TestConformanceFindsTheKubeconfigAsKubectl(t *testing.T) {
	bin, argsFile := fakeSuite(t, "0")
	t.Setenv(cmdline.BinaryEnv, bin)

	fromEnv := fakeCluster(t)
	t.Setenv("KUBECONFIG", fromEnv)
	if out, err := runConformance(); err != nil {
		t.Fatalf("$KUBECONFIG: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(argsFile); !strings.Contains(string(data), "-kubeconfig="+fromEnv+"\n") {
		t.Errorf("with $KUBECONFIG=%s the suite got %q", fromEnv, data)
	}

	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".kube"), 0o700)
	data, _ := os.ReadFile(fakeCluster(t))
	os.WriteFile(filepath.Join(home, ".kube", "config"), data, 0o600)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", home)
	if out, err := runConformance(); err != nil {
		t.Fatalf("~/.kube/config: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(argsFile); !strings.Contains(string(got), "-kubeconfig="+filepath.Join(home, ".kube", "config")+"\n") {
		t.Errorf("with ~/.kube/config the suite got %q", got)
	}
}

// TestConformanceBadInput: no kubeconfig, a missing one, and no suite
// binary — each one clear error, and the suite never runs.
func TestConformanceBadInput(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	if _, err := runConformance(); err == nil || !strings.Contains(err.Error(), "no kubeconfig") || !strings.Contains(err.Error(), ".kube/config") {
		t.Errorf("no --kubeconfig, no $KUBECONFIG, no ~/.kube/config: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nonexistent.kubeconfig")
	if _, err := runConformance("--kubeconfig", missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("--kubeconfig %s: %v, want an error naming it", missing, err)
	}
	t.Setenv(cmdline.BinaryEnv, filepath.Join(t.TempDir(), cmdline.Binary))
	if _, err := runConformance("--kubeconfig", fakeCluster(t)); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("no suite binary: %v, want an error saying `make build` builds it", err)
	}
}
