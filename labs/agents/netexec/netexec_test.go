package netexec

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startServer runs a netexec server on 127.0.0.1 with nPorts ephemeral
// ports and returns their addresses; it stops when the test ends.
func startServer(t *testing.T, pod string, nPorts int) (addrs []string, stop func() error) {
	t.Helper()
	s, err := Listen(Options{
		PodName: pod, NodeName: "node-1", PodIPs: []string{"10.244.1.5"},
		Ports: make([]int, nPorts), BindAddress: "127.0.0.1",
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	var stopped bool
	var stopErr error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(2 * ShutdownGrace):
				stopErr = errors.New("Serve did not return after cancel")
			}
		}
		return stopErr
	}
	t.Cleanup(func() { _ = stop() })
	for _, a := range s.Addrs() {
		addrs = append(addrs, a.String())
	}
	return addrs, stop
}

// request sends one HTTP/1.1 GET on conn and returns the response body,
// read to exactly Content-Length.
func request(t *testing.T, conn net.Conn, br *bufio.Reader, path string) (*http.Response, string) {
	t.Helper()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: test\r\n\r\n", path); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response to %s: %v", path, err)
	}
	if resp.ContentLength < 0 {
		t.Fatalf("%s: no Content-Length", path)
	}
	body := make([]byte, resp.ContentLength)
	if _, err := io.ReadFull(resp.Body, body); err != nil {
		t.Fatalf("read body of %s: %v", path, err)
	}
	return resp, string(body)
}

func TestHandlers(t *testing.T) {
	addrs, _ := startServer(t, "backend-a", 1)
	conn, err := net.Dial("tcp", addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)

	if _, body := request(t, conn, br, "/hostname"); body != "backend-a" {
		t.Errorf("/hostname = %q, want %q (no newline)", body, "backend-a")
	}
	if _, body := request(t, conn, br, "/clientip"); body != conn.LocalAddr().String() {
		t.Errorf("/clientip = %q, want the client's %q", body, conn.LocalAddr())
	}
	if resp, body := request(t, conn, br, "/healthz"); resp.StatusCode != 200 || body != "ok" {
		t.Errorf("/healthz = %d %q", resp.StatusCode, body)
	}
	if _, body := request(t, conn, br, "/echo?msg=hello%20there"); body != "hello there" {
		t.Errorf("/echo = %q", body)
	}
	resp, body := request(t, conn, br, "/")
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("/ Content-Type = %q", ct)
	}
	var root RootResponse
	if err := json.Unmarshal([]byte(body), &root); err != nil {
		t.Fatalf("/ body %q: %v", body, err)
	}
	want := RootResponse{PodInfo: PodInfo{PodName: "backend-a", NodeName: "node-1", PodIPs: []string{"10.244.1.5"}},
		ClientAddress: conn.LocalAddr().String()}
	if fmt.Sprint(root) != fmt.Sprint(want) {
		t.Errorf("/ = %+v, want %+v", root, want)
	}
	if resp, _ := request(t, conn, br, "/shell?cmd=id"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/shell = %d, want 404: there is no shell", resp.StatusCode)
	}
}

// TestClientClosesFirst checks keep-alive and that the server leaves the
// connection open after responding, so the client's close puts the client's
// socket, not the server's, into TIME_WAIT.
func TestClientClosesFirst(t *testing.T) {
	addrs, _ := startServer(t, "backend-b", 1)
	conn, err := net.Dial("tcp", addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	request(t, conn, br, "/hostname")
	request(t, conn, br, "/hostname") // same connection: keep-alive

	conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("after the responses the server closed or wrote (%v); it must wait for the client", err)
	}
	local := conn.LocalAddr().(*net.TCPAddr)
	conn.Close()

	// The active closer holds TIME_WAIT; find it in /proc/net/tcp.
	deadline := time.Now().Add(2 * time.Second)
	for {
		state, found := tcpState(t, local.Port)
		if found && state == "06" {
			return // TIME_WAIT on the client's port
		}
		if time.Now().After(deadline) {
			t.Fatalf("client port %d: state %q found=%v, want TIME_WAIT (06)", local.Port, state, found)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tcpState returns the /proc/net/tcp state (hex) of the socket whose local
// port is port.
func tcpState(t *testing.T, port int) (string, bool) {
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("no /proc/net/tcp: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		_, hexPort, _ := strings.Cut(f[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port {
			return f[3], true
		}
	}
	return "", false
}

func TestOneListenerPerPort(t *testing.T) {
	addrs, _ := startServer(t, "backend-c", 3)
	if len(addrs) != 3 {
		t.Fatalf("Addrs = %v, want 3", addrs)
	}
	for _, a := range addrs {
		resp, err := http.Get("http://" + a + "/hostname")
		if err != nil {
			t.Fatalf("GET %s: %v", a, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "backend-c" {
			t.Errorf("%s /hostname = %q", a, b)
		}
	}
}

func TestGracefulStop(t *testing.T) {
	addrs, stop := startServer(t, "backend-d", 1)
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// The port is free again, so another test of this run may listen on it
	// by now: a connection that is accepted fails the test only when our
	// server is the one that answers.
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addrs[0] + "/hostname")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if body, _ := io.ReadAll(resp.Body); string(body) == "backend-d" {
		t.Errorf("%s still serves backend-d after the context was cancelled", addrs[0])
	}
}

func TestListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no pod name", Options{Ports: []int{0}}, "PodName is required"},
		{"no ports", Options{PodName: "p"}, "at least one port"},
		{"port out of range", Options{PodName: "p", Ports: []int{70000}, PodIPs: []string{"x"}}, "port 70000 out of range"},
		{"port in use", Options{PodName: "p", Ports: []int{0, busyPort}, BindAddress: "127.0.0.1", PodIPs: []string{"x"}},
			"listen on 127.0.0.1:" + strconv.Itoa(busyPort)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Listen(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Listen error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestDiscoverPodIPsSkipsLoopback(t *testing.T) {
	ips, err := discoverPodIPs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range ips {
		if strings.HasPrefix(ip, "127.") || ip == "::1" {
			t.Errorf("discoverPodIPs returned loopback %s", ip)
		}
	}
}
