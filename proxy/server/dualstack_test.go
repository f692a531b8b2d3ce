package server

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDualStackHealthAndMetrics: a dual-stack Server keeps each family's
// health as upstream's ProxyHealthServer (healthy only when both are,
// Status per family) and each family's ip_family metric series.
func TestDualStackHealthAndMetrics(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := New(Options{Mode: "nftables", IPFamily: "IPv4", SecondaryIPFamily: "IPv6", HealthTimeout: time.Minute,
		Now: clock.Now, Logger: slog.New(slog.DiscardHandler)})
	_, _, before := get(t, s.MetricsHandler(), "/metrics")
	for _, f := range []string{"IPv4", "IPv6"} {
		if !strings.Contains(before, MetricSyncDuration+`_count{ip_family="`+f+`"} 0`) {
			t.Errorf("before any sync, /metrics lacks the %s sync duration at 0", f)
		}
	}

	s.QueuedUpdate()
	s.FamilySyncSucceeded("IPv4", 3*time.Millisecond)
	s.FamilySyncFailed("IPv6", errors.New("nft: table ip6 kube-proxy: busy"))
	clock.Advance(time.Minute)
	code, h := getHealth(t, s, "/healthz")
	if code != 503 || h.Healthy || !h.Status["IPv4"].Healthy || h.Status["IPv6"].Healthy {
		t.Errorf("IPv6 failing for a minute: %d %+v; want 503, IPv4 healthy, IPv6 not", code, h)
	}
	if h.LastError != "nft: table ip6 kube-proxy: busy" || h.ConsecutiveFailures != 1 {
		t.Errorf("last error %q (%d); want the IPv6 one", h.LastError, h.ConsecutiveFailures)
	}

	s.FamilySyncSucceeded("IPv6", 5*time.Millisecond)
	if code, h := getHealth(t, s, "/healthz"); code != 200 || !h.Status["IPv6"].Healthy {
		t.Errorf("after the IPv6 sync: %d %+v", code, h)
	}
	_, _, body := get(t, s.MetricsHandler(), "/metrics")
	for _, w := range []string{
		MetricSyncDuration + `_count{ip_family="IPv4"} 1`,
		MetricSyncDuration + `_count{ip_family="IPv6"} 1`,
		MetricRestoreFailures + `{ip_family="IPv4"} 0`,
		MetricRestoreFailures + `{ip_family="IPv6"} 1`,
		MetricLastQueuedTimestamp + `{ip_family="IPv6"} 1.767323045e+09`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %q", w)
		}
	}
}

// TestServiceHealthPerFamily: a dual-stack proxy's health check node port
// is served per family on the same port, tcp4 and tcp6 as upstream's
// per-family service health servers, each answering with its own
// family's local endpoints.
func TestServiceHealthPerFamily(t *testing.T) {
	port := freePort(t)
	healthy := func() bool { return true }
	v4 := &ServiceHealth{Address: "127.0.0.1", Network: "tcp4", Healthy: healthy}
	v6 := &ServiceHealth{Address: "::1", Network: "tcp6", Healthy: healthy}
	defer v4.Close()
	defer v6.Close()
	v4.Sync(map[int32]ServiceHealthCheck{port: {Namespace: "default", Name: "lb", LocalEndpoints: 2}})
	v6.Sync(map[int32]ServiceHealthCheck{port: {Namespace: "default", Name: "lb", LocalEndpoints: 1}})
	for host, want := range map[string]string{"127.0.0.1": `"localEndpoints": 2`, "[::1]": `"localEndpoints": 1`} {
		resp, err := http.Get("http://" + host + ":" + strconv.Itoa(int(port)) + "/")
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), want) {
			t.Errorf("%s answered %s, want %s", host, body, want)
		}
	}
}
