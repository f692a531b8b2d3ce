package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cleanCluster is an API server whose cluster has one node and nothing of
// the suite: the node list, an empty namespace list, no saved proxy
// configuration. It returns a kubeconfig for it.
func cleanCluster(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/nodes":
			w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"n1"}}]}`))
		case "/api/v1/namespaces":
			if !strings.Contains(r.URL.Query().Get("labelSelector"), "app.kubernetes.io/managed-by=svclab-conformance") {
				t.Errorf("namespaces listed with selector %q, want the suite's label", r.URL.Query().Get("labelSelector"))
			}
			w.Write([]byte(`{"kind":"NamespaceList","apiVersion":"v1","items":[]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		}
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

// TestConformanceCleanupOnACleanCluster: nothing to sweep is said so.
// (kube's tests sweep killed runs, restore the ConfigMap, and leave a
// running run alone.)
func TestConformanceCleanupOnACleanCluster(t *testing.T) {
	out, err := runConformanceCleanup("--kubeconfig", cleanCluster(t))
	if err != nil {
		t.Fatalf("cleanup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "sweep: nothing left by earlier runs") {
		t.Errorf("output %q does not say there was nothing to sweep", out)
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
