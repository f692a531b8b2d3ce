package traffic

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/agents/netexec"
)

// startUDPNetexec runs a netexec backend named pod answering UDP on ip (a
// 127.x address) and returns its ip:port.
func startUDPNetexec(t *testing.T, pod, ip string) string {
	t.Helper()
	s, err := netexec.Listen(netexec.Options{
		PodName: pod, Ports: []int{0}, UDPPorts: []int{0}, BindAddress: ip, PodIPs: []string{ip},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("netexec %s: %v", pod, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s.UDPAddrs()[0].String()
}

// freeUDPPort is a UDP port on ip that nothing is bound to now.
func freeUDPPort(t *testing.T, ip string) int {
	t.Helper()
	c, err := net.ListenPacket("udp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func TestRunUDPCountsBackends(t *testing.T) {
	for _, pod := range []string{"udp-1", "udp-2"} {
		addr := startUDPNetexec(t, pod, "127.0.0.4"+pod[len(pod)-1:])
		res, err := Run(t.Context(), Options{Target: addr, Protocol: ProtocolUDP, Connections: 40, Parallelism: 8,
			SourceIP: "127.0.0.1", Expected: []string{pod}})
		if err != nil {
			t.Fatalf("Run %s: %v", addr, err)
		}
		if res.Protocol != ProtocolUDP || res.Attempted != 40 || res.Succeeded != 40 || res.Backends[pod] != 40 || len(res.Backends) != 1 {
			t.Errorf("%s: protocol %q attempted %d succeeded %d backends %v failures %v, want 40 udp exchanges all answered by %s",
				addr, res.Protocol, res.Attempted, res.Succeeded, res.Backends, res.Failures, pod)
		}
		// Each exchange has a socket and a source port of its own.
		ports := map[string]bool{}
		for _, c := range res.Connections {
			if !strings.HasPrefix(c.LocalAddress, "127.0.0.1:") {
				t.Errorf("%s: exchange %d from %q, want a 127.0.0.1 port", addr, c.Index, c.LocalAddress)
			}
			ports[c.LocalAddress] = true
		}
		if len(ports) != 40 {
			t.Errorf("%s: 40 exchanges came from %d ports, want 40: a new socket and port each time", addr, len(ports))
		}
		if rep := res.Report(); !rep.Passed() || rep.PValue == nil || *rep.PValue != 1 {
			t.Errorf("%s: report %s (%s), p-value %v; want a pass with p = 1", addr, rep.Verdict, rep.VerdictReason, rep.PValue)
		}
	}
}

// TestRunUDPNeverReusesASourcePort: the kernel draws an ephemeral UDP port
// at random and takes a closed socket's port back at once, so without the
// run's ledger 1,000 exchanges one after another would share a port with
// probability 1 − e^(−1000·999/2/28232) > 0.99999998 (28,232 ports in the
// default range); with it every exchange has a port of its own — a
// collision survives only 64 redials in a row, (1000/28232)^64 < 1e-90.
func TestRunUDPNeverReusesASourcePort(t *testing.T) {
	const n = 1000
	addr := startUDPNetexec(t, "udp-ports", "127.0.0.51")
	res, err := Run(t.Context(), Options{Target: addr, Protocol: ProtocolUDP, Connections: n, Parallelism: 1, SourceIP: "127.0.0.1"})
	if err != nil {
		t.Fatalf("Run %s: %v", addr, err)
	}
	if res.Succeeded != n {
		t.Fatalf("%d of %d exchanges answered: %v", res.Succeeded, n, res.Failures)
	}
	first := map[string]int{}
	for _, c := range res.Connections {
		if i, ok := first[c.LocalAddress]; ok {
			t.Fatalf("exchanges %d and %d both came from %s: one conntrack entry for two", i, c.Index, c.LocalAddress)
		}
		first[c.LocalAddress] = c.Index
	}
}

// TestRunUDPFixedSourcePort: every datagram comes from the one port, and
// the server sees that port (clientip), as a long-lived UDP client's
// datagrams share one conntrack entry.
func TestRunUDPFixedSourcePort(t *testing.T) {
	addr := startUDPNetexec(t, "udp-fixed", "127.0.0.45")
	port := freeUDPPort(t, "127.0.0.1")
	from := "127.0.0.1:" + strconv.Itoa(port)
	res, err := Run(t.Context(), Options{Target: addr, Protocol: ProtocolUDP, Path: "/clientip", Connections: 5, Parallelism: 4,
		SourceIP: "127.0.0.1", SourcePort: port})
	if err != nil {
		t.Fatal(err)
	}
	if res.Succeeded != 5 || res.Backends[from] != 5 {
		t.Fatalf("succeeded %d, answers %v, failures %v; want 5 answers %s", res.Succeeded, res.Backends, res.Failures, from)
	}
	for _, c := range res.Connections {
		if c.LocalAddress != from {
			t.Errorf("exchange %d from %s, want %s", c.Index, c.LocalAddress, from)
		}
	}
}

func TestRunUDPEcho(t *testing.T) {
	addr := startUDPNetexec(t, "udp-echo", "127.0.0.46")
	res, err := Run(t.Context(), Options{Target: addr, Protocol: ProtocolUDP, Path: "/echo?msg=hi%20there", Connections: 2})
	if err != nil || res.Backends["hi there"] != 2 {
		t.Errorf("Run: %v, answers %v, failures %v; want 2 × \"hi there\"", err, res.Backends, res.Failures)
	}
}

// TestRunUDPClassifiesFailures: a port nothing is bound to answers with
// ICMP port unreachable, which the connected socket reads as
// ECONNREFUSED: refused, at once; a socket that never answers is a
// timeout.
func TestRunUDPClassifiesFailures(t *testing.T) {
	closed := "127.0.0.1:" + strconv.Itoa(freeUDPPort(t, "127.0.0.1"))
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	tests := []struct {
		name    string
		target  string
		timeout time.Duration
		want    FailureKind
		errText string
	}{
		{"nothing bound", closed, time.Minute, FailureRefused, "connection refused"},
		{"never answers", silent.LocalAddr().String(), 300 * time.Millisecond, FailureTimeout, "i/o timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(t.Context(), Options{Target: tt.target, Protocol: ProtocolUDP, Connections: 4, Parallelism: 2,
				Timeout: tt.timeout, Deadline: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if res.Attempted != 4 || res.Failures[tt.want] != 4 {
				t.Fatalf("attempted %d failures %v, want 4 %s", res.Attempted, res.Failures, tt.want)
			}
			for _, c := range res.Connections {
				if !strings.Contains(c.Error, tt.errText) {
					t.Errorf("exchange %d error %q, want it to mention %q", c.Index, c.Error, tt.errText)
				}
				if tt.want == FailureRefused && c.Duration >= time.Minute {
					t.Errorf("exchange %d refused after %s: the refusal must come before the timeout", c.Index, c.Duration)
				}
			}
		})
	}
}

func TestUDPOptionsErrors(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"bad protocol", Options{Target: "127.0.0.1:80", Connections: 1, Protocol: "sctp"}, `protocol "sctp"`},
		{"no UDP command", Options{Target: "127.0.0.1:80", Connections: 1, Protocol: ProtocolUDP, Path: "/healthz"}, "no UDP command"},
		{"source port out of range", Options{Target: "127.0.0.1:80", Connections: 1, SourcePort: 70000}, "source port 70000"},
		{"fixed TCP port, two connections", Options{Target: "127.0.0.1:80", Connections: 2, SourcePort: 4000}, "one connection only"},
	}
	for _, tt := range tests {
		if _, err := Run(t.Context(), tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestUDPCommand(t *testing.T) {
	for path, want := range map[string]string{"/hostname": "hostname", "/clientip": "clientip", "/echo?msg=a%20b": "echo a b"} {
		if got, err := udpCommand(path); err != nil || got != want {
			t.Errorf("udpCommand(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
}
