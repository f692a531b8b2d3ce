package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/scenarios/conformance/cmdline"
)

// cleanCluster is an API server that answers the node list (what svclab
// reaches before it runs the suite's sweep), and a kubeconfig for it.
func cleanCluster(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/nodes" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"n1"}}]}`))
	}))
	t.Cleanup(srv.Close)
	config := filepath.Join(t.TempDir(), "clean.kubeconfig")
	os.WriteFile(config, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+srv.URL+`"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600)
	return config
}

func runConformanceCleanup(args ...string) (string, error) {
	cmd := newConformance()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"cleanup"}, args...))
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	return out.String(), err
}

// TestConformanceCleanupRunsTheSuitesSweep: cleanup reaches the cluster,
// then runs the suite's binary with -cleanup and the cluster's flags (the
// sweep itself is kube's, tested there and by make e2e-kind on a killed
// run), passing its exit status on.
func TestConformanceCleanupRunsTheSuitesSweep(t *testing.T) {
	config := cleanCluster(t)
	bin, argsFile := fakeSuite(t, "0")
	t.Setenv(cmdline.BinaryEnv, bin)
	out, err := runConformanceCleanup("--kubeconfig", config, "--proxy-config", "ops/kp")
	if err != nil {
		t.Fatalf("cleanup: %v\n%s", err, out)
	}
	args, _ := os.ReadFile(argsFile)
	for _, want := range []string{"-cleanup", "-kubeconfig=" + config, "-proxy-config=ops/kp"} {
		if !strings.Contains("\n"+string(args), "\n"+want+"\n") {
			t.Errorf("the suite ran with\n%s\nwant %s", args, want)
		}
	}
	bin, _ = fakeSuite(t, "3")
	t.Setenv(cmdline.BinaryEnv, bin)
	if _, err := runConformanceCleanup("--kubeconfig", config); err == nil {
		t.Error("a failed sweep (exit 3) reported no error")
	}
}

// TestConformanceCleanupBadInput: a kubeconfig pointing nowhere is one
// line; --in-cluster with a kubeconfig, or outside a pod, is an error.
func TestConformanceCleanupBadInput(t *testing.T) {
	if _, err := runConformanceCleanup("--in-cluster", "--kubeconfig", "x"); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("--in-cluster --kubeconfig: %v", err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := runConformanceCleanup("--in-cluster"); err == nil || !strings.Contains(err.Error(), "in-cluster") {
		t.Errorf("--in-cluster outside a pod: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "missing.kubeconfig")
	if _, err := runConformanceCleanup("--kubeconfig", missing); err == nil || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), "\n") {
		t.Errorf("a missing kubeconfig: %v, want one line naming it", err)
	}
}
