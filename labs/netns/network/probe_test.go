package network

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// The machine has no ping or nc, so the test binary doubles as the probe:
// `ip netns exec <ns> <test binary>` with SVCLAB_PROBE set runs one probe
// inside that namespace and exits instead of running tests.
const probeEnv = "SVCLAB_PROBE"

func TestMain(m *testing.M) {
	if spec := os.Getenv(probeEnv); spec != "" {
		if err := runProbe(spec); err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runProbe(spec string) error {
	kind, arg, _ := strings.Cut(spec, " ")
	switch kind {
	case "ping":
		return probePing(arg, 5*time.Second)
	case "tcp":
		c, err := net.DialTimeout("tcp", arg, 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(c)
		if err != nil {
			return err
		}
		os.Stdout.Write(b)
		return nil
	}
	return fmt.Errorf("unknown probe %q", spec)
}

// probePing sends ICMP (or ICMPv6) echo requests to target until one is
// answered.
func probePing(target string, timeout time.Duration) error {
	dst := net.ParseIP(target)
	if dst == nil {
		return fmt.Errorf("bad address %q", target)
	}
	network, laddr, request, reply := "ip4:icmp", "0.0.0.0", byte(8), byte(0)
	if dst.To4() == nil {
		// The kernel fills in an ICMPv6 socket's checksum itself.
		network, laddr, request, reply = "ip6:ipv6-icmp", "::", 128, 129
	}
	c, err := net.ListenPacket(network, laddr)
	if err != nil {
		return err
	}
	defer c.Close()
	id := uint16(os.Getpid())
	deadline := time.Now().Add(timeout)
	for seq := uint16(1); time.Now().Before(deadline); seq++ {
		if _, err := c.WriteTo(echoRequest(request, id, seq), &net.IPAddr{IP: dst}); err != nil {
			// e.g. no route yet: try again until the deadline
			time.Sleep(100 * time.Millisecond)
			continue
		}
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		buf := make([]byte, 1500)
		for {
			n, peer, err := c.ReadFrom(buf)
			if err != nil {
				break // timed out: send the next request
			}
			// The kernel strips the IP header for ip4:icmp and ip6 sockets.
			if n >= 8 && buf[0] == reply && binary.BigEndian.Uint16(buf[4:]) == id &&
				peer.(*net.IPAddr).IP.Equal(dst) {
				return nil
			}
		}
	}
	return fmt.Errorf("no echo reply from %s within %v", target, timeout)
}

// echoRequest is an echo request of ICMP type typ (8, or ICMPv6's 128,
// whose checksum the kernel overwrites).
func echoRequest(typ byte, id, seq uint16) []byte {
	b := make([]byte, 8+16)
	b[0] = typ
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	copy(b[8:], "svclab-probe....")
	var sum uint32
	for i := 0; i < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	binary.BigEndian.PutUint16(b[2:], ^uint16(sum))
	return b
}

// probe runs one probe inside a namespace through `ip netns exec`.
func probe(t testing.TB, ns, spec string) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := NetnsCommand(ns, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), probeEnv+"="+spec)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s in %s: %v: %s", spec, ns, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// mustPing fails the test unless ns gets an echo reply from target.
func mustPing(t testing.TB, ns, target string) {
	t.Helper()
	if _, err := probe(t, ns, "ping "+target); err != nil {
		t.Errorf("ping: %v", err)
	}
}

// serveRemoteAddr listens on addr inside ns (the socket is made there, by
// Do) and answers every connection with the address it came from.
func serveRemoteAddr(t testing.TB, ns, addr string) {
	t.Helper()
	var ln net.Listener
	err := Do(ns, func() error {
		var err error
		ln, err = net.Listen("tcp4", addr)
		return err
	})
	if err != nil {
		t.Fatalf("listen in %s: %v", ns, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			c.Write([]byte(host))
			c.Close()
		}
	}()
}

// mustTCP connects from ns to addr and returns the source address the
// server saw.
func mustTCP(t testing.TB, ns, addr string) string {
	t.Helper()
	out, err := probe(t, ns, "tcp "+addr)
	if err != nil {
		t.Errorf("tcp: %v", err)
	}
	return out
}
