package netexec

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startUDPServer runs a netexec server on 127.0.0.1 with one TCP port and
// one UDP port of the same number, and returns that port's address.
func startUDPServer(t *testing.T, pod string) string {
	t.Helper()
	// The TCP port is picked by the kernel; UDP then binds the same number
	// (bind UDP first and retry, as a free TCP port may be a busy UDP one).
	for attempt := 0; attempt < 20; attempt++ {
		probe, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := probe.LocalAddr().(*net.UDPAddr).Port
		probe.Close()
		s, err := Listen(Options{
			PodName: pod, Ports: []int{port}, UDPPorts: []int{port}, BindAddress: "127.0.0.1",
			PodIPs: []string{"10.244.1.5"}, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
		if got := s.UDPAddrs()[0].String(); got != s.Addrs()[0].String() {
			t.Fatalf("UDP on %s, TCP on %s: want the same port", got, s.Addrs()[0])
		}
		return s.Addrs()[0].String()
	}
	t.Fatal("no port free for both TCP and UDP after 20 attempts")
	return ""
}

// ask sends one datagram on a new socket and returns the answer, or the
// read error when none comes within wait.
func ask(t *testing.T, addr, command string, wait time.Duration) (answer string, local string, err error) {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(command)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	return string(buf[:n]), conn.LocalAddr().String(), err
}

func TestUDPCommands(t *testing.T) {
	addr := startUDPServer(t, "backend-u")
	tests := []struct{ command, want string }{
		{"hostname", "backend-u"},
		{"  HOSTNAME\n", "backend-u"}, // agnhost trims and lower-cases
		{"echo hello there", "hello there"},
		{"echo MiXeD", "mixed"}, // lower-cased, as agnhost answers
	}
	for _, tt := range tests {
		got, _, err := ask(t, addr, tt.command, 5*time.Second)
		if err != nil || got != tt.want {
			t.Errorf("%q: answer %q, %v; want %q", tt.command, got, err, tt.want)
		}
	}
	got, local, err := ask(t, addr, "clientip", 5*time.Second)
	if err != nil || got != local {
		t.Errorf("clientip: answer %q, %v; want the sender's address %s", got, err, local)
	}
	// An unknown command gets no answer: the read times out.
	if got, _, err := ask(t, addr, "shell id", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("unknown command: answer %q, %v; want no answer (a read timeout)", got, err)
	}
}

// TestUDPAndTCPOnOnePort: one port number serves HTTP over TCP and the
// UDP commands, and each protocol answers the same name.
func TestUDPAndTCPOnOnePort(t *testing.T) {
	addr := startUDPServer(t, "backend-both")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /hostname HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	var body strings.Builder
	for {
		n, err := conn.Read(buf)
		body.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.HasSuffix(body.String(), "\r\n\r\nbackend-both") {
		t.Errorf("TCP GET /hostname: %q, want the body backend-both", body.String())
	}
	if got, _, err := ask(t, addr, "hostname", 5*time.Second); err != nil || got != "backend-both" {
		t.Errorf("UDP hostname: %q, %v", got, err)
	}
}

// TestUDPStops: after Serve's context ends the UDP port is closed, so a
// datagram gets ICMP port unreachable (ECONNREFUSED on a connected
// socket), not an answer.
func TestUDPStops(t *testing.T) {
	s, err := Listen(Options{PodName: "backend-s", Ports: []int{0}, UDPPorts: []int{0}, BindAddress: "127.0.0.1",
		PodIPs: []string{"x"}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	addr := s.UDPAddrs()[0].String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	if got, _, err := ask(t, addr, "hostname", 5*time.Second); err != nil || got != "backend-s" {
		t.Fatalf("before stop: %q, %v", got, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if got, _, err := ask(t, addr, "hostname", 5*time.Second); err == nil || got == "backend-s" {
		t.Errorf("after stop: %q, %v; want no answer", got, err)
	}
}

func TestUDPListenErrors(t *testing.T) {
	busy, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.LocalAddr().(*net.UDPAddr).Port
	_, err = Listen(Options{PodName: "p", Ports: []int{0}, UDPPorts: []int{port}, BindAddress: "127.0.0.1", PodIPs: []string{"x"}})
	if want := "listen on 127.0.0.1:" + strconv.Itoa(port) + "/udp"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("busy UDP port: %v, want %q", err, want)
	}
	_, err = Listen(Options{PodName: "p", Ports: []int{0}, UDPPorts: []int{NoUDPPort}, PodIPs: []string{"x"}})
	if err == nil || !strings.Contains(err.Error(), "port -1 out of range") {
		t.Errorf("UDP port -1 given to Listen: %v, want out of range (the command line turns -1 into no port)", err)
	}
}
