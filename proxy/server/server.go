package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Options configures a Server. Zero values mean upstream's defaults.
type Options struct {
	// MetricsAddress is host:port for /proxyMode and /metrics; Run skips
	// the metrics server when empty.
	MetricsAddress string
	// HealthzAddress is host:port for /healthz and /livez; Run skips the
	// health server when empty.
	HealthzAddress string
	// Mode is what /proxyMode answers ("iptables").
	Mode string
	// NodeName goes into the health JSON.
	NodeName string
	// IPFamily labels the per-family metrics and health status of the
	// primary family; default "IPv4".
	IPFamily string
	// SecondaryIPFamily is the other family of a dual-stack proxy ("IPv6"),
	// empty for a single-stack one. Each family has its own health and
	// per-family metric series, as upstream's ProxyHealthServer and
	// metrics keep them.
	SecondaryIPFamily string
	// HealthTimeout is how long a queued update may wait for a successful
	// sync; default 60s, upstream's 2 × the default 30s syncPeriod. Pass
	// config.Config.HealthTimeout().
	HealthTimeout time.Duration
	// Now is the clock; default time.Now. Tests pass a fake.
	Now func() time.Time
	// Logger gets start/stop lines; default slog.Default().
	Logger *slog.Logger
}

// Server holds the proxy's health state and metrics and serves them.
// Its methods are safe for concurrent use.
type Server struct {
	opts    Options
	metrics *proxyMetrics

	mu sync.Mutex
	// health is each family's state; unhealthyReason is the proxy's.
	health          map[string]*healthState
	unhealthyReason string
}

// New makes a Server; nothing listens until Run or Serve.
func New(opts Options) *Server {
	opts.IPFamily = cmp.Or(opts.IPFamily, "IPv4")
	opts.HealthTimeout = cmp.Or(opts.HealthTimeout, 60*time.Second)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{opts: opts, metrics: newProxyMetrics(opts.families()...), health: map[string]*healthState{}}
	for _, f := range opts.families() {
		s.health[f] = &healthState{}
	}
	return s
}

// families are the Server's IP families, primary first.
func (o Options) families() []string {
	if o.SecondaryIPFamily == "" {
		return []string{o.IPFamily}
	}
	return []string{o.IPFamily, o.SecondaryIPFamily}
}

// family is the state of the family named f; the primary's when f is
// empty or not one of the Server's.
func (s *Server) family(f string) (string, *healthState) {
	if h, ok := s.health[f]; ok {
		return f, h
	}
	return s.opts.IPFamily, s.health[s.opts.IPFamily]
}

// Registry is the Server's private Prometheus registry, for collectors the
// proxier wants on /metrics besides the built-in ones.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.registry }

// QueuedUpdate records that a Service or EndpointSlice change arrived that
// the next sync must program, for every family (upstream's metaproxier
// hands each change to both proxiers, which each queue it). The oldest
// unsynced one starts each family's health clock.
func (s *Server) QueuedUpdate() {
	now := s.opts.Now()
	s.mu.Lock()
	for _, h := range s.health {
		if h.pendingSince.IsZero() {
			h.pendingSince = now
		}
	}
	s.mu.Unlock()
	for _, f := range s.opts.families() {
		s.metrics.lastQueuedTimestamp.WithLabelValues(f).Set(unixSeconds(now))
	}
}

// SyncSucceeded records a sync of the primary family that programmed the
// rules, taking d; see FamilySyncSucceeded.
func (s *Server) SyncSucceeded(d time.Duration) { s.FamilySyncSucceeded(s.opts.IPFamily, d) }

// FamilySyncSucceeded records a sync of family that programmed the rules,
// taking d (upstream's ProxyHealthServer.Updated and the sync duration
// metrics of that ip_family). It clears the family's pending updates,
// failure count and last error, but not a reason given to SetUnhealthy.
func (s *Server) FamilySyncSucceeded(family string, d time.Duration) {
	now := s.opts.Now()
	s.mu.Lock()
	family, h := s.family(family)
	h.lastSynced = now
	h.pendingSince = time.Time{}
	h.consecutiveFailures = 0
	h.lastError = ""
	s.mu.Unlock()
	s.metrics.syncDuration.WithLabelValues(family).Observe(d.Seconds())
	s.metrics.lastSyncTimestamp.WithLabelValues(family).Set(unixSeconds(now))
}

// SyncFailed records a failed sync of the primary family; see
// FamilySyncFailed.
func (s *Server) SyncFailed(err error) { s.FamilySyncFailed(s.opts.IPFamily, err) }

// FamilySyncFailed records a sync of family whose restore failed: it
// counts kubeproxy_sync_proxy_rules_iptables_restore_failures_total of
// that ip_family and keeps the family's update pending, so failures that
// last HealthTimeout make /healthz 503.
func (s *Server) FamilySyncFailed(family string, err error) {
	now := s.opts.Now()
	msg := "sync failed"
	if err != nil {
		msg = err.Error()
	}
	s.mu.Lock()
	family, h := s.family(family)
	if h.pendingSince.IsZero() {
		h.pendingSince = now
	}
	h.consecutiveFailures++
	h.lastError = msg
	s.mu.Unlock()
	s.metrics.restoreFailures.WithLabelValues(family).Inc()
}

// SetUnhealthy makes /healthz and /livez answer 503 with reason until
// ClearUnhealthy, whatever syncs do meanwhile. For conditions a resync
// cannot fix, such as a rejected configuration. An empty reason clears.
func (s *Server) SetUnhealthy(reason string) {
	s.mu.Lock()
	s.unhealthyReason = reason
	s.mu.Unlock()
}

// ClearUnhealthy undoes SetUnhealthy.
func (s *Server) ClearUnhealthy() { s.SetUnhealthy("") }

// SetObjectCounts records how many service ports and endpoints the last
// sync programmed (svclab_proxy_services, svclab_proxy_endpoints).
func (s *Server) SetObjectCounts(services, endpoints int) {
	s.metrics.services.Set(float64(services))
	s.metrics.endpoints.Set(float64(endpoints))
}

// SetIPTablesRuleCount records how many rules the proxy owns in table
// ("nat", "filter") of the primary family, as upstream's
// kubeproxy_sync_proxy_rules_iptables_total.
func (s *Server) SetIPTablesRuleCount(table string, rules int) {
	s.metrics.iptablesRules.WithLabelValues(table, s.opts.IPFamily).Set(float64(rules))
}

// Health is the current verdict with its details, as /healthz would report
// it except that LastUpdated is always the last successful sync. As
// upstream's ProxyHealthServer: the proxy is healthy when every family
// is; LastUpdated is the latest family's; Status has each family's.
// Reason, LastError and ConsecutiveFailures are the first unhealthy (or
// failing) family's, primary first.
func (s *Server) Health() Health {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Health{CurrentTime: now, Healthy: true, Status: map[string]ProxierHealth{}, NodeName: s.opts.NodeName}
	for _, f := range s.opts.families() {
		h := *s.health[f]
		h.unhealthyReason = s.unhealthyReason
		healthy, reason := h.verdict(now, s.opts.HealthTimeout)
		out.Status[f] = ProxierHealth{LastUpdated: h.lastSynced, Healthy: healthy}
		if h.lastSynced.After(out.LastUpdated) {
			out.LastUpdated = h.lastSynced
		}
		if !healthy && out.Healthy {
			out.Healthy, out.Reason = false, reason
		}
		if h.lastError != "" && out.LastError == "" {
			out.LastError, out.ConsecutiveFailures = h.lastError, h.consecutiveFailures
		}
	}
	return out
}

// Run listens on Options.MetricsAddress and Options.HealthzAddress (each
// skipped when empty) and serves until ctx is cancelled; see Serve.
func (s *Server) Run(ctx context.Context) error {
	var metricsLn, healthzLn net.Listener
	var err error
	if s.opts.MetricsAddress != "" {
		if metricsLn, err = net.Listen("tcp", s.opts.MetricsAddress); err != nil {
			return fmt.Errorf("proxy metrics server: listen on %s: %w", s.opts.MetricsAddress, err)
		}
	}
	if s.opts.HealthzAddress != "" {
		if healthzLn, err = net.Listen("tcp", s.opts.HealthzAddress); err != nil {
			if metricsLn != nil {
				metricsLn.Close()
			}
			return fmt.Errorf("proxy healthz server: listen on %s: %w", s.opts.HealthzAddress, err)
		}
	}
	return s.Serve(ctx, metricsLn, healthzLn)
}

// Serve serves the metrics endpoints on metricsLn and the health endpoints
// on healthzLn (either may be nil) until ctx is cancelled, then shuts both
// down gracefully (5s at most) and returns nil. If a server fails first,
// the other is shut down and the error is returned.
func (s *Server) Serve(ctx context.Context, metricsLn, healthzLn net.Listener) error {
	type named struct {
		name string
		srv  *http.Server
		ln   net.Listener
	}
	var servers []named
	if metricsLn != nil {
		servers = append(servers, named{"metrics", s.newHTTPServer(s.MetricsHandler()), metricsLn})
	}
	if healthzLn != nil {
		servers = append(servers, named{"healthz", s.newHTTPServer(s.HealthzHandler()), healthzLn})
	}
	if len(servers) == 0 {
		return errors.New("proxy server: neither a metrics nor a healthz listener to serve")
	}

	errs := make(chan error, len(servers))
	for _, n := range servers {
		s.opts.Logger.Info("proxy server listening", "server", n.name, "address", n.ln.Addr().String())
		go func() {
			if err := n.srv.Serve(n.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("proxy %s server on %s: %w", n.name, n.ln.Addr(), err)
				return
			}
			errs <- nil
		}()
	}

	var firstErr error
	select {
	case <-ctx.Done():
	case firstErr = <-errs:
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, n := range servers {
		if err := n.srv.Shutdown(shutdownCtx); err != nil {
			n.srv.Close()
		}
	}
	return firstErr
}

func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn),
	}
}

func unixSeconds(t time.Time) float64 {
	return float64(t.UnixNano()) / 1e9
}
