package netexec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Options configures Serve.
type Options struct {
	// PodName is what /hostname answers. Required.
	PodName string
	// NodeName is reported by /.
	NodeName string
	// PodIPs are reported by /; when empty, the namespace's global unicast
	// addresses are listed at start.
	PodIPs []string
	// Ports are the TCP containerPorts: one HTTP listener each. Required.
	Ports []int
	// UDPPorts are the ports to answer agnhost's UDP commands on (see
	// udp.go): one socket each, and none when empty. A port may be one of
	// Ports too: TCP and UDP on the same port number.
	UDPPorts []int
	// BindAddress is the IP to listen on; empty means all addresses (what a
	// pod does). Tests on the host pass "127.0.0.1".
	BindAddress string
	// Logger gets start/stop lines, and a debug line per request; default
	// slog.Default().
	Logger *slog.Logger
	// DelayShutdown is agnhost netexec's --delay-shutdown: how long the
	// server goes on serving after it is told to stop (SIGTERM), as a
	// pod's server may during its termination grace period.
	DelayShutdown time.Duration
}

// ShutdownGrace is how long Serve waits for in-flight requests after its
// context is cancelled before closing connections outright.
const ShutdownGrace = 5 * time.Second

// headerTimeout bounds how long a new connection may stay silent; it never
// applies to an idle keep-alive connection between requests.
const headerTimeout = time.Minute

// Server is a netexec server listening on its ports.
type Server struct {
	opts      Options
	listeners []net.Listener
	udp       []*net.UDPConn
	http      *http.Server
}

// Serve listens on every port in opts.Ports and serves until ctx is
// cancelled, then shuts down gracefully and returns nil. It returns an
// error if a port cannot be bound or a listener fails.
func Serve(ctx context.Context, opts Options) error {
	s, err := Listen(opts)
	if err != nil {
		return err
	}
	return s.Serve(delayed(ctx, opts.DelayShutdown))
}

// delayed is a context that ends delay after ctx ends.
func delayed(ctx context.Context, delay time.Duration) context.Context {
	if delay <= 0 {
		return ctx
	}
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		<-ctx.Done()
		time.Sleep(delay)
		cancel()
	}()
	return out
}

// Listen binds every port in opts.UDPPorts, then every port in opts.Ports
// (closing those already bound if one fails), without serving yet; Addrs
// and UDPAddrs then tell the bound addresses, which is how a test using
// port 0 learns its port. The UDP ports are bound first, so a TCP port
// that listens tells that the UDP ports are bound too.
func Listen(opts Options) (*Server, error) {
	if opts.PodName == "" {
		return nil, errors.New("netexec: PodName is required")
	}
	if len(opts.Ports) == 0 {
		return nil, errors.New("netexec: at least one port is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if len(opts.PodIPs) == 0 {
		ips, err := discoverPodIPs()
		if err != nil {
			return nil, fmt.Errorf("netexec: %w", err)
		}
		opts.PodIPs = ips
	}
	s := &Server{opts: opts}
	if err := s.bind(); err != nil {
		s.closeListeners()
		return nil, err
	}
	info := PodInfo{PodName: opts.PodName, NodeName: opts.NodeName, PodIPs: opts.PodIPs}
	s.http = &http.Server{
		Handler: NewHandler(info, opts.Logger),
		// No IdleTimeout and no ReadTimeout: an idle keep-alive connection
		// stays open until the client closes it.
		ReadHeaderTimeout: headerTimeout,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// bind binds the UDP sockets, then the TCP listeners.
func (s *Server) bind() error {
	for _, port := range append(append([]int{}, s.opts.UDPPorts...), s.opts.Ports...) {
		if port < 0 || port > 65535 {
			return fmt.Errorf("netexec: port %d out of range 0..65535", port)
		}
	}
	for _, port := range s.opts.UDPPorts {
		addr := net.JoinHostPort(s.opts.BindAddress, strconv.Itoa(port))
		udpAddr, err := net.ResolveUDPAddr("udp", addr)
		if err != nil {
			return fmt.Errorf("netexec: UDP address %s: %w", addr, err)
		}
		conn, err := net.ListenUDP("udp", udpAddr)
		if err != nil {
			return fmt.Errorf("netexec: listen on %s/udp: %w", addr, err)
		}
		s.udp = append(s.udp, conn)
	}
	for _, port := range s.opts.Ports {
		addr := net.JoinHostPort(s.opts.BindAddress, strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("netexec: listen on %s: %w", addr, err)
		}
		s.listeners = append(s.listeners, ln)
	}
	return nil
}

// UDPAddrs are the bound UDP addresses, in the order of Options.UDPPorts.
func (s *Server) UDPAddrs() []net.Addr {
	addrs := make([]net.Addr, len(s.udp))
	for i, c := range s.udp {
		addrs[i] = c.LocalAddr()
	}
	return addrs
}

// Addrs are the bound listener addresses, in the order of Options.Ports.
func (s *Server) Addrs() []net.Addr {
	addrs := make([]net.Addr, len(s.listeners))
	for i, ln := range s.listeners {
		addrs[i] = ln.Addr()
	}
	return addrs
}

// Serve serves on the listeners and UDP sockets Listen bound until ctx is
// cancelled, then shuts down gracefully (ShutdownGrace at most) and returns
// nil; or returns the first listener's or socket's error.
func (s *Server) Serve(ctx context.Context) error {
	errs := make(chan error, len(s.listeners)+len(s.udp))
	for _, conn := range s.udp {
		s.opts.Logger.Info("netexec serving", "pod", s.opts.PodName, "address", conn.LocalAddr().String()+"/udp")
		go func() {
			if err := serveUDP(conn, s.opts.PodName, s.opts.Logger); err != nil {
				errs <- fmt.Errorf("netexec: serving on %s/udp: %w", conn.LocalAddr(), err)
			}
		}()
	}
	for _, ln := range s.listeners {
		s.opts.Logger.Info("netexec serving", "pod", s.opts.PodName, "address", ln.Addr().String())
		go func() {
			if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("netexec: serving on %s: %w", ln.Addr(), err)
			}
		}()
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errs:
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	if err := s.http.Shutdown(shutdownCtx); err != nil {
		s.http.Close()
	}
	s.closeUDP()
	s.opts.Logger.Info("netexec stopped", "pod", s.opts.PodName)
	return serveErr
}

// Kill closes the listeners and every open connection at once, without
// waiting for requests in flight, as a killed container's sockets close.
// It is for a Serve whose context is cancelled too: that Serve then closes
// the UDP sockets and returns at once instead of after ShutdownGrace.
func (s *Server) Kill() {
	s.http.Close() //nolint:errcheck // closing: what fails is gone either way
}

func (s *Server) closeListeners() {
	for _, ln := range s.listeners {
		ln.Close()
	}
	s.listeners = nil
	s.closeUDP()
}

// closeUDP closes the UDP sockets: their serveUDP loops return.
func (s *Server) closeUDP() {
	for _, c := range s.udp {
		c.Close()
	}
	s.udp = nil
}
