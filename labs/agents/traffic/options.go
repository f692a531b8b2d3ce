package traffic

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Defaults for Options' zero values.
const (
	DefaultParallelism = 16
	DefaultTimeout     = 2 * time.Second
	DefaultDeadline    = 60 * time.Second
	DefaultPath        = "/hostname"
)

// MaxConnections bounds Options.Connections: a run is a test, not a load
// generator.
const MaxConnections = 1_000_000

// Options says what to connect to and how much.
type Options struct {
	// Target is the IP:PORT to connect to (a Service's ClusterIP:port).
	Target string
	// Connections is how many new connections to make; at least 1.
	Connections int
	// Parallelism is how many connections may be open at once; default 16.
	Parallelism int
	// Timeout bounds each connection from dial to last byte; default 2s.
	Timeout time.Duration
	// Deadline bounds the whole run; connections not started by then are
	// not made and Result.DeadlineExceeded is set. Default 60s.
	Deadline time.Duration
	// Path is the HTTP path to GET; default "/hostname".
	Path string
	// SourceIP, if set, is the local address to connect from (the port is
	// left to the kernel).
	SourceIP string
	// Expected, if set, are the backends that should share the traffic:
	// NAME (weight 1) or NAME=WEIGHT each, shares in proportion to the
	// weights (ParseExpected); Report then flags a missing or unexpected
	// one. If empty, Report expects a uniform split over the backends that
	// answered.
	Expected []string
	// Alpha is the significance level of Report's verdict: the split fails
	// when the chi-square p-value is below it. Default DefaultAlpha.
	Alpha float64
}

// withDefaults validates o and fills its zero values.
func (o Options) withDefaults() (Options, error) {
	if _, _, err := net.SplitHostPort(o.Target); err != nil {
		return o, fmt.Errorf("traffic: target %q: want IP:PORT: %w", o.Target, err)
	}
	if o.Connections < 1 || o.Connections > MaxConnections {
		return o, fmt.Errorf("traffic: connections %d: want 1..%d", o.Connections, MaxConnections)
	}
	if o.Parallelism < 0 || o.Timeout < 0 || o.Deadline < 0 {
		return o, errors.New("traffic: parallelism, timeout and deadline must not be negative")
	}
	if o.SourceIP != "" {
		if _, err := netip.ParseAddr(o.SourceIP); err != nil {
			return o, fmt.Errorf("traffic: source IP %q: %w", o.SourceIP, err)
		}
	}
	if _, _, err := ParseExpected(o.Expected); err != nil {
		return o, err
	}
	if !(o.Alpha >= 0 && o.Alpha < 1) {
		return o, fmt.Errorf("traffic: alpha %g: want a level in (0, 1)", o.Alpha)
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Parallelism == 0 {
		o.Parallelism = DefaultParallelism
	}
	o.Parallelism = min(o.Parallelism, o.Connections)
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Deadline == 0 {
		o.Deadline = DefaultDeadline
	}
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.Path[0] != '/' || strings.ContainsFunc(o.Path, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return o, fmt.Errorf("traffic: path %q: want an absolute path without spaces or control characters", o.Path)
	}
	return o, nil
}
