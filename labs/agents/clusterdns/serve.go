package clusterdns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/proxy/sources"
)

// Options configures Serve.
type Options struct {
	// LabDir is the lab's state directory, whose objects the server reads
	// and watches (as the node proxies do). Required.
	LabDir string
	// Listen is the address of the UDP and TCP listeners; default ":53".
	Listen string
	// MetricsListen is the address of /metrics (CoreDNS's :9153); "-"
	// serves none.
	MetricsListen string
	// Zone is the cluster domain; default cluster.local.
	Zone string
	// Logger gets start, reload and stop lines; default slog.Default().
	Logger *slog.Logger
}

// Default addresses: DNS on 53, metrics on 9153, as the coredns pod's ports.
const (
	DefaultListen        = ":53"
	DefaultMetricsListen = ":9153"
)

// Server is a cluster DNS server bound to its addresses.
type Server struct {
	opts    Options
	store   *labstore.Store
	index   atomic.Pointer[Index]
	udp     net.PacketConn
	tcp     net.Listener
	metrics net.Listener
	counts  counters
}

// Listen binds the UDP, TCP and metrics listeners and loads the lab's
// objects once, without serving yet; Addr then tells the bound address.
func Listen(opts Options) (*Server, error) {
	if opts.LabDir == "" {
		return nil, errors.New("clusterdns: the lab directory is required")
	}
	if opts.Listen == "" {
		opts.Listen = DefaultListen
	}
	if opts.MetricsListen == "" {
		opts.MetricsListen = DefaultMetricsListen
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{opts: opts, store: labstore.OpenDir(opts.LabDir)}
	if err := s.reload(); err != nil {
		return nil, err
	}
	var err error
	if s.udp, err = net.ListenPacket("udp", opts.Listen); err != nil {
		return nil, fmt.Errorf("clusterdns: listen on udp %s: %w", opts.Listen, err)
	}
	// TCP on the port UDP got (they differ only when Listen asks for port 0).
	tcpAddr := net.JoinHostPort(hostOf(opts.Listen), fmt.Sprint(s.udp.LocalAddr().(*net.UDPAddr).Port))
	if s.tcp, err = net.Listen("tcp", tcpAddr); err != nil {
		s.udp.Close()
		return nil, fmt.Errorf("clusterdns: listen on tcp %s: %w", tcpAddr, err)
	}
	if opts.MetricsListen != "-" {
		if s.metrics, err = net.Listen("tcp", opts.MetricsListen); err != nil {
			s.udp.Close()
			s.tcp.Close()
			return nil, fmt.Errorf("clusterdns: listen on tcp %s (metrics): %w", opts.MetricsListen, err)
		}
	}
	return s, nil
}

func hostOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return host
}

// Addr is the bound DNS address (UDP and TCP share it).
func (s *Server) Addr() string { return s.udp.LocalAddr().String() }

// Serve answers queries until ctx ends, rebuilding the index whenever the
// lab's store changes; it returns nil after ctx ends, or the first
// listener's error.
func (s *Server) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	src := &sources.LabStore{Store: s.store}
	if err := src.Run(ctx, func() {
		if err := s.reload(); err != nil {
			s.opts.Logger.Warn("clusterdns: keeping the last objects", "error", err)
		}
	}); err != nil {
		return err
	}
	handler := dns.HandlerFunc(s.serveDNS)
	servers := []*dns.Server{
		{PacketConn: s.udp, Handler: handler},
		{Listener: s.tcp, Handler: handler, ReadTimeout: 10 * time.Second, IdleTimeout: func() time.Duration { return 10 * time.Second }},
	}
	errs := make(chan error, len(servers)+1)
	for _, srv := range servers {
		go func() { errs <- srv.ActivateAndServe() }()
	}
	var httpSrv *http.Server
	if s.metrics != nil {
		httpSrv = &http.Server{Handler: s.metricsHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := httpSrv.Serve(s.metrics); !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		}()
	}
	s.opts.Logger.Info("clusterdns serving", "address", s.Addr(), "zone", s.index.Load().Zone)
	var err error
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	for _, srv := range servers {
		srv.Shutdown() //nolint:errcheck // stopping anyway
	}
	if httpSrv != nil {
		httpSrv.Close()
	}
	s.opts.Logger.Info("clusterdns stopped")
	return err
}

// reload reads the lab's objects and swaps in a new index.
func (s *Server) reload() error {
	st, gen, err := s.store.ReadObjects()
	if err != nil {
		return fmt.Errorf("clusterdns: %w", err)
	}
	ix := NewIndex(s.opts.Zone, Objects{Services: st.Services, EndpointSlices: st.EndpointSlices, Serial: uint32(gen)})
	s.index.Store(ix)
	s.opts.Logger.Info("clusterdns: objects loaded", "generation", gen, "services", len(st.Services))
	return nil
}

// serveDNS is the edge: one message in, the index's response out.
func (s *Server) serveDNS(w dns.ResponseWriter, req *dns.Msg) {
	udp := w.LocalAddr().Network() == "udp"
	resp := s.index.Load().Respond(req, udp)
	s.counts.count(udp, resp.Rcode)
	if err := w.WriteMsg(resp); err != nil {
		s.opts.Logger.Debug("clusterdns: write", "error", err)
	}
}

// Serve is Listen then Serve.
func Serve(ctx context.Context, opts Options) error {
	s, err := Listen(opts)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}
