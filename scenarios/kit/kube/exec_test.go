package kube

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// execTarget is a target on the fake API server, without a node agent:
// enough to exec.
func execTarget(t *testing.T, f *fakeAPI, cfg *rest.Config) *Target {
	t.Helper()
	roles, _ := Permissions("")
	cfg = guarded(cfg, roles)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target := &Target{cfg: cfg, clientset: cs}
	t.Cleanup(func() { target.Close(context.Background()) })
	f.execOut = func(_ *fakeAPI, ns, pod string, cmd []string) (string, error) {
		if cmd[0] == "false" {
			return "", errors.New("command terminated with exit code 1")
		}
		return "hello from " + ns + "/" + pod + ": " + strings.Join(cmd, " ") + "\n", nil
	}
	return target
}

// recordingDialer dials as net.Dialer does and notes each address.
type recordingDialer struct {
	mu     sync.Mutex
	dialed []string
}

func (d *recordingDialer) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, address)
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, address)
}

func (d *recordingDialer) addresses() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dialed...)
}

// TestExecWebSocketFirstThenSPDY: exec goes over a WebSocket where the
// API server upgrades to one, and falls back to SPDY where it does not,
// as kubectl exec does; with a config dialer (a cluster in another
// network namespace) or without; a failing command is an error.
func TestExecWebSocketFirstThenSPDY(t *testing.T) {
	for _, c := range []struct {
		name     string
		spdyOnly bool
		dialer   bool
	}{
		{"websocket", false, false},
		{"spdy fallback", true, false},
		{"websocket through the dialer", false, true},
		{"spdy fallback through the dialer", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, cfg := newFakeAPI(t, "n1")
			f.spdyOnly = c.spdyOnly
			d := &recordingDialer{}
			if c.dialer {
				cfg.Dial = d.dial
			}
			target := execTarget(t, f, cfg)
			out, err := target.exec(context.Background(), "svclab", "agent-x", "", "echo", "hello")
			if err != nil {
				t.Fatalf("exec: %v", err)
			}
			if want := "hello from svclab/agent-x: echo hello\n"; out != want {
				t.Errorf("exec output %q, want %q", out, want)
			}
			if _, err := target.exec(context.Background(), "svclab", "agent-x", "", "false"); err == nil || !strings.Contains(err.Error(), "false in svclab/agent-x") {
				t.Errorf("a failing command: %v, want an error naming it and the pod", err)
			}
			protocol := "websocket"
			if c.spdyOnly {
				protocol = "spdy"
			}
			if got := f.execs(protocol); got != 2 {
				t.Errorf("%d of 2 execs answered over %s (websocket %d, spdy %d)", got, protocol, f.execs("websocket"), f.execs("spdy"))
			}
			if c.dialer {
				want := strings.TrimPrefix(f.srv.URL, "https://")
				dialed := d.addresses()
				if len(dialed) == 0 {
					t.Fatalf("the config's dialer dialled nothing: exec bypassed it")
				}
				for _, a := range dialed {
					if a != want {
						t.Errorf("the dialer dialled %s, want only the API server %s", a, want)
					}
				}
			}
		})
	}
}

// TestExecForbiddenNamesTheRule: an exec the API server forbids (on the
// WebSocket, then on SPDY) says what was refused and which rule grants it.
func TestExecForbiddenNamesTheRule(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	target := execTarget(t, f, cfg)
	f.forbid = func(c apiCall) bool { return c.Subresource == "exec" }
	_, err := target.exec(context.Background(), "svclab-agent-x", "agent-x", "", "echo")
	want := "forbidden: create pods/exec agent-x in svclab-agent-x: the ClusterRole svclab-conformance that `svclab conformance rbac` prints grants it (pods/exec: create)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("exec: %v, want it to say %q", err, want)
	}
}
