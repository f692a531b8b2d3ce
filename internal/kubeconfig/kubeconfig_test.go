package kubeconfig

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
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

// TestReachAServerThatNeverAnswersIsOneLineWithin10s: a server that
// accepts connections and never says a word (a TLS handshake that never
// ends) is one line within 10 seconds.
func TestReachAServerThatNeverAnswersIsOneLineWithin10s(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var held []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never answered
			mu.Unlock()
		}
	}()
	server := "https://" + ln.Addr().String()
	path := writeKubeconfig(t, server)
	cfg, err := Load(path, "", "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = Reach(context.Background(), cfg, path)
	took := time.Since(start)
	if err == nil {
		t.Fatal("Reach: no error from a server that never answers")
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q is more than one line", err)
	}
	for _, want := range []string{"kubeconfig " + path, server, "does not answer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if took > 10*time.Second {
		t.Errorf("the error took %s, want within 10 s", took)
	}
}

// TestReachForbiddenAndUnauthorized: an API server that answers but
// refuses says so, not "does not answer".
func TestReachForbiddenAndUnauthorized(t *testing.T) {
	for code, want := range map[int]string{
		http.StatusForbidden:    `answers, but: nodes is forbidden: User "ci" cannot list resource "nodes" (` + "`svclab conformance rbac`",
		http.StatusUnauthorized: "refuses the credentials",
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			reason := map[int]string{403: "Forbidden", 401: "Unauthorized"}[code]
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes is forbidden: User \"ci\" cannot list resource \"nodes\"","reason":%q,"code":%d}`, reason, code)
		}))
		err := Reach(context.Background(), &rest.Config{Host: srv.URL}, InClusterSource)
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), InClusterSource) {
			t.Errorf("%d: %v, want an error starting with %q and saying %q", code, err, InClusterSource, want)
		}
	}
}

// TestInClusterOutsideAPod: outside a pod the in-cluster config is an
// error that says what it needs.
func TestInClusterOutsideAPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	_, err := InCluster()
	if err == nil || !strings.Contains(err.Error(), InClusterSource) || !strings.Contains(err.Error(), "KUBERNETES_SERVICE_HOST") {
		t.Errorf("InCluster outside a pod: %v, want an error naming the in-cluster config and what it lacks", err)
	}
}
