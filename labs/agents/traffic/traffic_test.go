package traffic

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/agents/netexec"
)

// startNetexec runs a netexec backend named pod on ip (a 127.x address)
// and returns its ip:port.
func startNetexec(t *testing.T, pod, ip string) string {
	t.Helper()
	s, err := netexec.Listen(netexec.Options{
		PodName: pod, Ports: []int{0}, BindAddress: ip, PodIPs: []string{ip},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("netexec %s: %v", pod, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s.Addrs()[0].String()
}

// closedPort returns an ip:port on loopback where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// silentServer accepts connections and never answers, until the test ends.
func silentServer(t *testing.T) string {
	t.Helper()
	return rawServer(t, func(c net.Conn) {
		_, _ = io.Copy(io.Discard, c) // hold the connection, say nothing
	})
}

// resettingServer reads the request and answers with a TCP RST.
func resettingServer(t *testing.T) string {
	t.Helper()
	return rawServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		_ = c.(*net.TCPConn).SetLinger(0) // close sends RST
	})
}

func rawServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 1024)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
			go func() { handle(c); c.Close() }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-conns:
				c.Close()
			default:
				return
			}
		}
	})
	return ln.Addr().String()
}

func TestRunCountsBackends(t *testing.T) {
	backends := map[string]string{ // pod → address, each on its own loopback IP
		"web-1": startNetexec(t, "web-1", "127.0.0.11"),
		"web-2": startNetexec(t, "web-2", "127.0.0.12"),
		"web-3": startNetexec(t, "web-3", "127.0.0.13"),
	}
	for pod, addr := range backends {
		res, err := Run(t.Context(), Options{Target: addr, Connections: 40, Parallelism: 8, SourceIP: "127.0.0.1"})
		if err != nil {
			t.Fatalf("Run %s: %v", addr, err)
		}
		if res.Attempted != 40 || res.Succeeded != 40 || res.Backends[pod] != 40 || len(res.Backends) != 1 {
			t.Errorf("%s: attempted %d succeeded %d backends %v failures %v, want 40 connections all to %s",
				addr, res.Attempted, res.Succeeded, res.Backends, res.Failures, pod)
		}
		seen := map[string]bool{}
		for _, c := range res.Connections {
			if !strings.HasPrefix(c.LocalAddress, "127.0.0.1:") || seen[c.LocalAddress] {
				t.Errorf("%s: connection %d local address %q: want a new 127.0.0.1 port each time", addr, c.Index, c.LocalAddress)
			}
			seen[c.LocalAddress] = true
			if c.Connect <= 0 || c.Connect > c.Duration {
				t.Errorf("%s: connection %d connect time %s, want more than 0 and at most its duration %s", addr, c.Index, c.Connect, c.Duration)
			}
			if c.Start < 0 || c.Start+c.Duration > res.Elapsed {
				t.Errorf("%s: connection %d started at %s for %s, want it within the run's %s", addr, c.Index, c.Start, c.Duration, res.Elapsed)
			}
		}
		if first, last := res.Connections[0], res.Connections[len(res.Connections)-1]; last.Start <= first.Start {
			t.Errorf("%s: connection %d started at %s, not after connection 0 at %s: 40 connections 8 at a time cannot all start together",
				addr, last.Index, last.Start, first.Start)
		}
		rep := res.Report()
		if rep.PValue == nil || *rep.PValue != 1 || rep.ExpectedFrom != "observed" {
			t.Errorf("%s: one observed backend: p-value %v from %q, want 1 from observed", addr, rep.PValue, rep.ExpectedFrom)
		}
	}
}

// TestClientClosesFirst checks that the client's side of each connection
// ends in TIME_WAIT and the server's never does: the client closed first,
// after reading the answer.
func TestClientClosesFirst(t *testing.T) {
	addr := startNetexec(t, "web-tw", "127.0.0.21")
	res, err := Run(t.Context(), Options{Target: addr, Connections: 5, Parallelism: 1})
	if err != nil || res.Succeeded != 5 {
		t.Fatalf("Run: %v, %+v", err, res)
	}
	const timeWait = "06"
	deadline := time.Now().Add(3 * time.Second)
	for {
		states := procNetTCPStates(t)
		var problems []string
		for _, c := range res.Connections {
			if got := states[c.LocalAddress+" "+addr]; got != timeWait {
				problems = append(problems, fmt.Sprintf("client %s: state %q, want TIME_WAIT (06)", c.LocalAddress, got))
			}
			if got := states[addr+" "+c.LocalAddress]; got == timeWait {
				problems = append(problems, fmt.Sprintf("server side of %s in TIME_WAIT: the server closed first", c.LocalAddress))
			}
		}
		if len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(strings.Join(problems, "\n"))
		}
		time.Sleep(20 * time.Millisecond) // FIN_WAIT1/2 on the way to TIME_WAIT
	}
}

// procNetTCPStates maps "localip:port remoteip:port" to the hex state in
// /proc/net/tcp.
func procNetTCPStates(t *testing.T) map[string]string {
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("no /proc/net/tcp: %v", err)
	}
	states := map[string]string{}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		local, ok1 := procAddr(f[1])
		remote, ok2 := procAddr(f[2])
		if ok1 && ok2 {
			states[local+" "+remote] = f[3]
		}
	}
	return states
}

// procAddr decodes /proc/net/tcp's "0100007F:1F90" (a little-endian IPv4
// word and a port) into "127.0.0.1:8080".
func procAddr(s string) (string, bool) {
	hexIP, hexPort, _ := strings.Cut(s, ":")
	ip, err1 := strconv.ParseUint(hexIP, 16, 32)
	port, err2 := strconv.ParseUint(hexPort, 16, 16)
	if err1 != nil || err2 != nil {
		return "", false
	}
	return fmt.Sprintf("%d.%d.%d.%d:%d", byte(ip), byte(ip>>8), byte(ip>>16), byte(ip>>24), port), true
}

func TestRunClassifiesFailures(t *testing.T) {
	// The per-connection timeout is short only where it is the outcome
	// (a silent backend); where an answer is the outcome it is a bound for
	// a loaded host, which a refused, reset or 404 connection never nears.
	tests := []struct {
		name    string
		target  string
		path    string
		timeout time.Duration
		want    FailureKind
		errText string
	}{
		{"nothing listening", closedPort(t), "", time.Minute, FailureRefused, "connection refused"},
		{"backend never answers", silentServer(t), "", 300 * time.Millisecond, FailureTimeout, "i/o timeout"},
		{"backend resets", resettingServer(t), "", time.Minute, FailureReset, "connection reset by peer"},
		{"HTTP 404", startNetexec(t, "web-404", "127.0.0.31"), "/no-such-path", time.Minute, FailureOther, "HTTP status 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(t.Context(), Options{Target: tt.target, Path: tt.path, Connections: 6, Parallelism: 3,
				Timeout: tt.timeout, Deadline: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if res.Attempted != 6 || res.Succeeded != 0 || res.Failures[tt.want] != 6 {
				t.Fatalf("attempted %d succeeded %d failures %v, want 6 %s", res.Attempted, res.Succeeded, res.Failures, tt.want)
			}
			for _, c := range res.Connections {
				if !strings.Contains(c.Error, tt.errText) {
					t.Errorf("connection %d error %q, want it to mention %q", c.Index, c.Error, tt.errText)
				}
			}
			if res.DeadlineExceeded {
				t.Errorf("the overall deadline ended the run; want each connection ended by its own %s", tt.want)
			}
			rep := res.Report()
			if rep.PValue != nil || rep.Failures[tt.want] != 6 {
				t.Errorf("report: p-value %v failures %v", rep.PValue, rep.Failures)
			}
			var table strings.Builder
			if err := rep.WriteTable(&table); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(table.String(), fmt.Sprintf("(%s 6)", tt.want)) {
				t.Errorf("table does not show the failures:\n%s", table.String())
			}
		})
	}
}

// TestRunStopsAtDeadline: the overall deadline ends the connections in
// flight. Their own timeout is a minute, so a Run that waited for them
// would take a minute; the 30 s bound below is the product's promise (stop
// at the 300 ms deadline) with a margin no loaded host uses up.
func TestRunStopsAtDeadline(t *testing.T) {
	target := silentServer(t)
	start := time.Now()
	res, err := Run(t.Context(), Options{Target: target, Connections: 1000, Parallelism: 4,
		Timeout: time.Minute, Deadline: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if elapsed > 30*time.Second {
		t.Errorf("Run took %s with a 300ms deadline (and a minute per connection)", elapsed)
	}
	if !res.DeadlineExceeded || res.Attempted >= 1000 || res.Failures[FailureTimeout] != res.Attempted {
		t.Errorf("deadline exceeded %v, attempted %d, failures %v", res.DeadlineExceeded, res.Attempted, res.Failures)
	}
	for _, c := range res.Connections {
		if !strings.Contains(c.Error, "overall deadline reached") {
			t.Errorf("connection %d: %q, want the overall deadline named", c.Index, c.Error)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want FailureKind
	}{
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, FailureRefused},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, FailureReset},
		{&net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}, FailureReset},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, FailureUnreachable},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ENETUNREACH)}, FailureUnreachable},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ETIMEDOUT)}, FailureTimeout},
		{fmt.Errorf("reading: %w", os.ErrDeadlineExceeded), FailureTimeout},
		{context.DeadlineExceeded, FailureTimeout},
		{errors.New("HTTP status 503"), FailureOther},
		{io.ErrUnexpectedEOF, FailureOther},
	}
	for _, tt := range tests {
		if got := Classify(tt.err); got != tt.want {
			t.Errorf("Classify(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

func TestOptionsErrors(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no port", Options{Target: "127.0.0.1", Connections: 1}, `target "127.0.0.1": 127.0.0.1 has no port`},
		{"bare IPv6", Options{Target: "fd00:10:96::a", Connections: 1}, "want [fd00:10:96::a]:PORT"},
		{"IPv6 without brackets", Options{Target: "fd00:10:96:1:2:3:4:5:80", Connections: 1}, "want [fd00:10:96:1:2:3:4:5]:80"},
		{"no connections", Options{Target: "127.0.0.1:80"}, "connections 0"},
		{"too many", Options{Target: "127.0.0.1:80", Connections: MaxConnections + 1}, "connections 1000001"},
		{"negative timeout", Options{Target: "127.0.0.1:80", Connections: 1, Timeout: -1}, "must not be negative"},
		{"bad source", Options{Target: "127.0.0.1:80", Connections: 1, SourceIP: "nope"}, `source IP "nope"`},
		{"bad path", Options{Target: "127.0.0.1:80", Connections: 1, Path: "/a b"}, `path "/a b"`},
	}
	for _, tt := range tests {
		if _, err := Run(t.Context(), tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

// A 404 from a plain net/http server proves the client parses ordinary
// responses, not only netexec's.
func TestRunAgainstPlainHTTPServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "plain-backend") // trailing newline, trimmed
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	res, err := Run(t.Context(), Options{Target: ln.Addr().String(), Connections: 3})
	if err != nil || res.Backends["plain-backend"] != 3 {
		t.Errorf("Run: %v, backends %v failures %v", err, res.Backends, res.Failures)
	}
}
