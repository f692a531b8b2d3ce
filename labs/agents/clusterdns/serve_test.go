package clusterdns

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/svclab/svclab/internal/labstore"
)

// TestServeFollowsTheStore runs the server on loopback over a lab store in
// a temporary directory: it answers over UDP and TCP, follows a change of
// the store, and counts what it answered at /metrics.
func TestServeFollowsTheStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	st := labstore.OpenDir(dir)
	objs := labObjects()
	if _, err := st.WriteObjects(&labstore.State{Services: objs.Services[:2], EndpointSlices: objs.EndpointSlices[:2]}); err != nil {
		t.Fatal(err)
	}
	s, err := Listen(Options{LabDir: dir, Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
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
	for _, proto := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: proto, Timeout: 2 * time.Second}
		resp, _, err := c.Exchange(ask("web.default.svc.cluster.local.", dns.TypeA), s.Addr())
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if len(resp.Answer) != 1 || resp.Answer[0].(*dns.A).A.String() != "10.96.0.11" {
			t.Errorf("%s: web → %v, want 10.96.0.11", proto, resp.Answer)
		}
	}
	// db does not exist yet; once the store has it, the server answers it.
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	if resp, _, err := c.Exchange(ask("db.demo.svc.cluster.local.", dns.TypeA), s.Addr()); err != nil || resp.Rcode != dns.RcodeNameError {
		t.Fatalf("db before it exists: %v %v", resp, err)
	}
	if _, err := st.WriteObjects(&labstore.State{Services: objs.Services, EndpointSlices: objs.EndpointSlices}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, _, err := c.Exchange(ask("db.demo.svc.cluster.local.", dns.TypeA), s.Addr())
		if err == nil && len(resp.Answer) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("db after the store changed: %v %v", resp, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, err := http.Get("http://" + s.metrics.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`coredns_dns_requests_total{proto="tcp"`, `coredns_dns_responses_total{rcode="NXDOMAIN"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
}

// TestListenErrors: a missing lab directory is the only required option,
// and a port in use is one error naming it.
func TestListenErrors(t *testing.T) {
	if _, err := Listen(Options{}); err == nil {
		t.Error("Listen without a lab directory succeeded")
	}
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Listen(Options{LabDir: t.TempDir(), Listen: ln.LocalAddr().String(), MetricsListen: "-"})
	if err == nil || !strings.Contains(err.Error(), ln.LocalAddr().String()) {
		t.Errorf("Listen on a used port: %v, want an error naming %s", err, ln.LocalAddr())
	}
}

// TestServeOverIPv6 runs the server on ::1 over a dual-stack lab's store:
// it answers an IPv6 client over UDP and TCP, AAAA with the Service's
// IPv6 ClusterIP.
func TestServeOverIPv6(t *testing.T) {
	if ln, err := net.ListenPacket("udp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	} else {
		ln.Close()
	}
	dir := filepath.Join(t.TempDir(), "lab")
	objs := dualStackObjects()
	if _, err := labstore.OpenDir(dir).WriteObjects(&labstore.State{Services: objs.Services, EndpointSlices: objs.EndpointSlices}); err != nil {
		t.Fatal(err)
	}
	s, err := Listen(Options{LabDir: dir, Listen: "[::1]:0", MetricsListen: "-", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
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
	if !strings.HasPrefix(s.Addr(), "[::1]:") {
		t.Fatalf("Addr %s, want [::1]:PORT", s.Addr())
	}
	for _, proto := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: proto, Timeout: 2 * time.Second}
		resp, _, err := c.Exchange(ask("web.default.svc.cluster.local.", dns.TypeAAAA), s.Addr())
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if len(resp.Answer) != 1 || resp.Answer[0].(*dns.AAAA).AAAA.String() != "fd00:10:96::b" {
			t.Errorf("%s: web AAAA → %v, want fd00:10:96::b", proto, resp.Answer)
		}
	}
}
