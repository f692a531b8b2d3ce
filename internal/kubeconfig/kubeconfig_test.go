package kubeconfig

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unreachableServer is an address nothing listens on: listen, note it,
// close.
func unreachableServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "https://" + addr
}

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "unreachable.kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReachUnreachableClusterIsOneClearError: a kubeconfig whose server
// does not answer is one error naming the file and the server, quickly.
func TestReachUnreachableClusterIsOneClearError(t *testing.T) {
	server := unreachableServer(t)
	path := writeKubeconfig(t, server)
	cfg, err := Load(path, "", "")
	if err != nil {
		t.Fatalf("Load %s: %v", path, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err = Reach(ctx, cfg, path)
	if err == nil {
		t.Fatalf("Reach %s: no error, want one saying the server does not answer", server)
	}
	for _, want := range []string{path, server, "does not answer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// A product promise with a huge margin: a refused connection is one
	// error in milliseconds; 20 s is past even ReachTimeout.
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the error took %s: an unreachable cluster should fail fast", took)
	}
}

// TestLoadBadInput: no file, a missing file, an unknown context — each an
// error naming the file (and the context).
func TestLoadBadInput(t *testing.T) {
	if _, err := Load("", "", ""); err == nil || !strings.Contains(err.Error(), "no kubeconfig") {
		t.Errorf("Load with no file: %v, want a 'no kubeconfig file' error", err)
	}
	missing := filepath.Join(t.TempDir(), "nonexistent.kubeconfig")
	if _, err := Load(missing, "", ""); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load %s: %v, want an error naming the file", missing, err)
	}
	path := writeKubeconfig(t, unreachableServer(t))
	if _, err := Load(path, "no-such-context", ""); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "no-such-context") {
		t.Errorf("Load %s with context no-such-context: %v, want an error naming the file and the context", path, err)
	}
}
