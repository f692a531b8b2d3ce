package netexec

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/network"
)

// TestIntegrationServesBothFamilies runs netexec as a pod does (bound to
// all addresses, its pod IPs read from the namespace) in a fresh namespace
// holding 10.244.1.5 and fd00:10:244:1::5, and asks it over ::1, the ULA
// address and 127.0.0.1: one socket answers both families, and
// /clientip, / and the UDP clientip command say an IPv6 client as agnhost
// does ("[fd00:10:244:1::6]:PORT") and an IPv4 one unmapped.
func TestIntegrationServesBothFamilies(t *testing.T) {
	roottest.Require(t, "creates a network namespace with IPv4 and IPv6 addresses in it")
	ns := roottest.Netns(t, "svclab-netexec6-test")
	roottest.AddLocalAddrs(t, ns, "lo", "10.244.1.5/32", "fd00:10:244:1::5/128", "fd00:10:244:1::6/128")
	var s *Server
	err := network.Do(ns, func() error {
		var err error
		s, err = Listen(Options{PodName: "web-6", Ports: []int{0}, UDPPorts: []int{0}, Logger: slog.New(slog.DiscardHandler)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	port := s.Addrs()[0].(*net.TCPAddr).Port
	udpPort := s.UDPAddrs()[0].(*net.UDPAddr).Port

	for _, c := range []struct{ from, to string }{
		{"::1", "::1"},
		{"fd00:10:244:1::6", "fd00:10:244:1::5"},
		{"127.0.0.1", "127.0.0.1"},
		{"10.244.1.5", "10.244.1.5"},
	} {
		var local, clientip, udpLocal, udpClientip string
		var root RootResponse
		err := network.Do(ns, func() error {
			var err error
			local, clientip, root, err = askHTTP(c.from, net.JoinHostPort(c.to, fmt.Sprint(port)))
			if err != nil {
				return err
			}
			// UDP from the server's own address: the server answers from
			// the address the kernel picks for the client (agnhost's
			// ReadFrom/WriteTo), which a connected client only accepts
			// when it is the address it sent to.
			udpLocal, udpClientip, err = askUDP(c.to, net.JoinHostPort(c.to, fmt.Sprint(udpPort)))
			return err
		})
		if err != nil {
			t.Fatalf("from %s to %s: %v", c.from, c.to, err)
		}
		if clientip != local || root.ClientAddress != local {
			t.Errorf("from %s to %s: /clientip %q, / clientAddress %q, want the client's %q", c.from, c.to, clientip, root.ClientAddress, local)
		}
		if udpClientip != udpLocal {
			t.Errorf("from %s to %s over UDP: clientip %q, want the client's %q", c.from, c.to, udpClientip, udpLocal)
		}
		// IPv4 first, then IPv6 in the kernel's order; no loopback.
		if got := root.PodIPs; len(got) != 3 || got[0] != "10.244.1.5" || !slices.Contains(got, "fd00:10:244:1::5") || !slices.Contains(got, "fd00:10:244:1::6") {
			t.Errorf("/ podIPs %v, want 10.244.1.5 first, then fd00:10:244:1::5 and ::6", got)
		}
	}
}

// askHTTP asks /clientip and / on one connection from the address from,
// and returns the client's ip:port as Go prints it.
func askHTTP(from, to string) (local, clientip string, root RootResponse, err error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", to)
	if err != nil {
		return "", "", root, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	if clientip, err = get(conn, br, "/clientip"); err != nil {
		return "", "", root, err
	}
	body, err := get(conn, br, "/")
	if err != nil {
		return "", "", root, err
	}
	err = json.Unmarshal([]byte(body), &root)
	return conn.LocalAddr().String(), clientip, root, err
}

func get(conn net.Conn, br *bufio.Reader, path string) (string, error) {
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: test\r\n\r\n", path); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// askUDP sends clientip from the address from and returns the socket's
// address and the answer.
func askUDP(from, to string) (local, answer string, err error) {
	raddr, err := net.ResolveUDPAddr("udp", to)
	if err != nil {
		return "", "", err
	}
	conn, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(from)}, raddr)
	if err != nil {
		return "", "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("clientip")); err != nil {
		return "", "", err
	}
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	return conn.LocalAddr().String(), string(buf[:n]), err
}
