package kube

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"
)

// fakeExecServer answers pod exec requests as the kubelet does over SPDY
// (protocol v4.channel.k8s.io): it accepts the error, stdout and stderr
// streams, writes stdout, and closes them all (an empty error stream is
// success).
func fakeExecServer(t *testing.T, stdout string) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/exec") {
			http.Error(w, "want POST …/exec, got "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		if _, err := httpstream.Handshake(r, w, []string{"v4.channel.k8s.io"}); err != nil {
			return
		}
		streams := make(chan httpstream.Stream, 4)
		conn := streamspdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
			streams <- s
			return nil
		})
		if conn == nil {
			return
		}
		defer conn.Close()
		byType := map[string]httpstream.Stream{}
		for len(byType) < 3 {
			select {
			case s := <-streams:
				byType[s.Headers().Get("streamType")] = s
			case <-time.After(10 * time.Second):
				t.Errorf("exec server: got streams %v, want error, stdout and stderr", byType)
				return
			}
		}
		if _, err := byType["stdout"].Write([]byte(stdout)); err != nil {
			t.Errorf("exec server: writing stdout: %v", err)
		}
		for _, s := range byType {
			s.Close()
		}
		select {
		case <-conn.CloseChan():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestExecGoesThroughTheConfigDialer: with a rest.Config that has a dialer
// (as netnsdial.Config makes for a cluster in another network namespace),
// exec's upgraded SPDY connection is dialled by it, and the command's
// output comes back.
func TestExecGoesThroughTheConfigDialer(t *testing.T) {
	srv := fakeExecServer(t, "hello from the pod\n")
	var (
		mu     sync.Mutex
		dialed []string
	)
	var d net.Dialer
	cfg := &rest.Config{
		Host:            srv.URL,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, address)
			mu.Unlock()
			return d.DialContext(ctx, network, address)
		},
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target := &Target{cfg: cfg, clientset: clientset}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := target.exec(ctx, "svclab", "agent-x", "", "echo", "hello")
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	if out != "hello from the pod\n" {
		t.Errorf("exec output %q, want %q", out, "hello from the pod\n")
	}
	mu.Lock()
	defer mu.Unlock()
	want := strings.TrimPrefix(srv.URL, "https://")
	if len(dialed) == 0 || dialed[0] != want {
		t.Errorf("the config's dialer dialled %v, want %s: the exec upgrade bypassed it", dialed, want)
	}
}
