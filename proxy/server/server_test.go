package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for the health rules.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTestServer(t *testing.T) (*Server, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := New(Options{
		Mode:          "iptables",
		NodeName:      "node-a",
		HealthTimeout: time.Minute,
		Now:           clock.Now,
		Logger:        slog.New(slog.DiscardHandler),
	})
	return s, clock
}

func get(t *testing.T, h http.Handler, path string) (int, http.Header, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Header(), rec.Body.String()
}

func getHealth(t *testing.T, s *Server, path string) (int, Health) {
	t.Helper()
	code, hdr, body := get(t, s.HealthzHandler(), path)
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s Content-Type = %q", path, ct)
	}
	var h Health
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("%s body %q: %v", path, body, err)
	}
	return code, h
}

func TestProxyMode(t *testing.T) {
	s, _ := newTestServer(t)
	code, hdr, body := get(t, s.MetricsHandler(), "/proxyMode")
	if code != 200 || body != "iptables" {
		t.Errorf("/proxyMode = %d %q, want 200 \"iptables\"", code, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("/proxyMode Content-Type = %q", ct)
	}
	if code, _, body := get(t, s.MetricsHandler(), "/healthz"); code != 200 || body != "ok" {
		t.Errorf("metrics /healthz = %d %q", code, body)
	}
}

func TestHealthRules(t *testing.T) {
	type step struct {
		do          func(s *Server, clock *fakeClock)
		wantCode    int
		wantReason  string // substring; "" means no reason
		wantFailure int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"healthy while starting up", []step{
			{func(*Server, *fakeClock) {}, 200, "", 0},
		}},
		{"queued update synced in time", []step{
			{func(s *Server, c *fakeClock) { s.QueuedUpdate(); c.Advance(30 * time.Second) }, 200, "", 0},
			{func(s *Server, c *fakeClock) { s.SyncSucceeded(5 * time.Millisecond); c.Advance(10 * time.Minute) }, 200, "", 0},
		}},
		{"queued update never synced", []step{
			{func(s *Server, c *fakeClock) { s.QueuedUpdate(); c.Advance(59 * time.Second) }, 200, "", 0},
			{func(s *Server, c *fakeClock) { c.Advance(time.Second) }, 503, "no successful sync for 1m0s", 0},
			{func(s *Server, c *fakeClock) { s.SyncSucceeded(time.Millisecond) }, 200, "", 0},
		}},
		{"restore keeps failing", []step{
			{func(s *Server, c *fakeClock) { s.SyncFailed(errors.New("iptables-restore: line 7 failed")) }, 200, "", 1},
			{func(s *Server, c *fakeClock) {
				for range 5 {
					c.Advance(15 * time.Second)
					s.SyncFailed(errors.New("iptables-restore: line 7 failed"))
				}
			}, 503, "6 consecutive sync failures", 6},
			{func(s *Server, c *fakeClock) { s.SyncSucceeded(time.Millisecond) }, 200, "", 0},
		}},
		{"rejected config is sticky across syncs", []step{
			{func(s *Server, c *fakeClock) { s.SetUnhealthy(`mode "ipvs" not implemented`) }, 503, `mode "ipvs" not implemented`, 0},
			{func(s *Server, c *fakeClock) { s.SyncSucceeded(time.Millisecond) }, 503, `mode "ipvs"`, 0},
			{func(s *Server, c *fakeClock) { s.ClearUnhealthy() }, 200, "", 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, clock := newTestServer(t)
			for i, st := range tt.steps {
				st.do(s, clock)
				for _, path := range []string{"/healthz", "/livez"} {
					code, h := getHealth(t, s, path)
					if code != st.wantCode || h.Healthy != (st.wantCode == 200) {
						t.Errorf("step %d %s: code %d healthy %v, want %d (%+v)", i, path, code, h.Healthy, st.wantCode, h)
					}
					if st.wantReason == "" && h.Reason != "" || !strings.Contains(h.Reason, st.wantReason) {
						t.Errorf("step %d %s: reason %q, want %q", i, path, h.Reason, st.wantReason)
					}
					if h.ConsecutiveFailures != st.wantFailure {
						t.Errorf("step %d %s: consecutiveFailures %d, want %d", i, path, h.ConsecutiveFailures, st.wantFailure)
					}
					if h.NodeName != "node-a" || !h.CurrentTime.Equal(clock.Now()) {
						t.Errorf("step %d %s: nodeName %q currentTime %v", i, path, h.NodeName, h.CurrentTime)
					}
					if _, ok := h.Status["IPv4"]; !ok {
						t.Errorf("step %d %s: no IPv4 status in %+v", i, path, h.Status)
					}
				}
			}
		})
	}
}

func TestHealthzLastUpdatedLikeUpstream(t *testing.T) {
	s, clock := newTestServer(t)
	s.SyncSucceeded(time.Millisecond)
	synced := clock.Now()
	clock.Advance(10 * time.Second)

	_, h := getHealth(t, s, "/healthz")
	if !h.LastUpdated.Equal(clock.Now()) {
		t.Errorf("healthy lastUpdated = %v, want the current time %v (upstream compatibility)", h.LastUpdated, clock.Now())
	}
	if !h.Status["IPv4"].LastUpdated.Equal(synced) {
		t.Errorf("status lastUpdated = %v, want the real sync time %v", h.Status["IPv4"].LastUpdated, synced)
	}

	s.SetUnhealthy("broken")
	_, h = getHealth(t, s, "/healthz")
	if !h.LastUpdated.Equal(synced) {
		t.Errorf("unhealthy lastUpdated = %v, want the real sync time %v", h.LastUpdated, synced)
	}

	// The raw JSON carries upstream's field names.
	_, _, body := get(t, s.HealthzHandler(), "/healthz")
	for _, key := range []string{`"lastUpdated"`, `"currentTime"`, `"healthy":false`, `"nodeName":"node-a"`, `"reason":"broken"`} {
		if !strings.Contains(body, key) {
			t.Errorf("/healthz body %s lacks %s", body, key)
		}
	}
}

func TestMetrics(t *testing.T) {
	s, clock := newTestServer(t)
	_, _, before := get(t, s.MetricsHandler(), "/metrics")
	for _, name := range []string{MetricSyncDuration + "_count", MetricLastSyncTimestamp, MetricRestoreFailures} {
		if !strings.Contains(before, name+`{ip_family="IPv4"} 0`) {
			t.Errorf("before any sync, /metrics lacks %s at 0", name)
		}
	}

	s.QueuedUpdate()
	s.SyncFailed(errors.New("exit status 1"))
	s.SyncFailed(errors.New("exit status 1"))
	s.SyncSucceeded(3 * time.Millisecond)
	s.SyncSucceeded(20 * time.Millisecond)
	s.SetObjectCounts(3, 7)
	s.SetIPTablesRuleCount("nat", 42)
	get(t, s.HealthzHandler(), "/healthz")

	code, hdr, body := get(t, s.MetricsHandler(), "/metrics")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics = %d %q", code, hdr.Get("Content-Type"))
	}
	want := []string{
		"# TYPE " + MetricSyncDuration + " histogram",
		MetricSyncDuration + `_bucket{ip_family="IPv4",le="0.004"} 1`,
		MetricSyncDuration + `_bucket{ip_family="IPv4",le="0.032"} 2`,
		MetricSyncDuration + `_count{ip_family="IPv4"} 2`,
		"# TYPE " + MetricLastSyncTimestamp + " gauge",
		MetricLastSyncTimestamp + `{ip_family="IPv4"} 1.767323045e+09`,
		MetricLastQueuedTimestamp + `{ip_family="IPv4"} 1.767323045e+09`,
		MetricRestoreFailures + `{ip_family="IPv4"} 2`,
		MetricIPTablesRules + `{ip_family="IPv4",table="nat"} 42`,
		MetricHealthzResponses + `{code="200"} 1`,
		MetricServices + " 3",
		MetricEndpoints + " 7",
		"go_goroutines ",
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %q", w)
		}
	}
	_ = clock
}

func TestServeOnLoopback(t *testing.T) {
	s, _ := newTestServer(t)
	metricsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	healthzLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, metricsLn, healthzLn) }()

	fetch := func(addr net.Addr, path string) (int, string) {
		resp, err := http.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := fetch(metricsLn.Addr(), "/proxyMode"); code != 200 || body != "iptables" {
		t.Errorf("/proxyMode = %d %q", code, body)
	}
	if code, body := fetch(healthzLn.Addr(), "/healthz"); code != 200 || !strings.Contains(body, `"healthy":true`) {
		t.Errorf("/healthz = %d %q", code, body)
	}
	s.SetUnhealthy("config rejected")
	if code, _ := fetch(healthzLn.Addr(), "/healthz"); code != 503 {
		t.Errorf("/healthz after SetUnhealthy = %d, want 503", code)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := net.DialTimeout("tcp", healthzLn.Addr().String(), time.Second); err == nil {
		t.Error("healthz listener still accepts after shutdown")
	}
}

func TestRunReportsListenError(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	s := New(Options{MetricsAddress: busy.Addr().String(), Logger: slog.New(slog.DiscardHandler)})
	err = s.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "proxy metrics server: listen on "+busy.Addr().String()) {
		t.Errorf("Run on a busy port: %v", err)
	}
}
