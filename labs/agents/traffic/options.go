package traffic

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/hostport"
)

// Defaults for Options' zero values.
const (
	DefaultParallelism = 16
	DefaultTimeout     = 2 * time.Second
	DefaultDeadline    = 60 * time.Second
	DefaultPath        = "/hostname"
)

// The protocols of Options.Protocol.
const (
	ProtocolTCP = "tcp"
	ProtocolUDP = "udp"
)

// MaxConnections bounds Options.Connections: a run is a test, not a load
// generator.
const MaxConnections = 1_000_000

// Options says what to connect to and how much.
type Options struct {
	// Target is the IP:PORT to connect to (a Service's ClusterIP:port); an
	// IPv6 address in brackets: [fd00:10:96::a]:80.
	Target string
	// Protocol is ProtocolTCP (the default: HTTP GETs) or ProtocolUDP
	// (agnhost netexec's UDP commands, see udp.go).
	Protocol string
	// Connections is how many new connections to make; at least 1.
	Connections int
	// Parallelism is how many connections may be open at once; default 16.
	Parallelism int
	// Timeout bounds each connection from dial to last byte; default 2s.
	Timeout time.Duration
	// Deadline bounds the whole run; connections not started by then are
	// not made and Result.DeadlineExceeded is set. Default 60s.
	Deadline time.Duration
	// Path is the HTTP path to GET; default "/hostname". Over UDP it names
	// the command: /hostname, /clientip or /echo?msg=MSG.
	Path string
	// SourceIP, if set, is the local address to connect from (the port is
	// left to the kernel unless SourcePort is set).
	SourceIP string
	// SourcePort, if set, is the local port every connection comes from,
	// one at a time (Parallelism becomes 1): over UDP every datagram then
	// belongs to one conntrack entry, as a long-lived UDP client's do.
	// Over TCP it allows one connection only (the next one would find the
	// port in TIME_WAIT).
	SourcePort int
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
	if _, _, err := hostport.Split(o.Target); err != nil {
		return o, fmt.Errorf("traffic: target %q: %w", o.Target, err)
	}
	if o.Connections < 1 || o.Connections > MaxConnections {
		return o, fmt.Errorf("traffic: connections %d: want 1..%d", o.Connections, MaxConnections)
	}
	if o.Parallelism < 0 || o.Timeout < 0 || o.Deadline < 0 {
		return o, errors.New("traffic: parallelism, timeout and deadline must not be negative")
	}
	switch o.Protocol {
	case "":
		o.Protocol = ProtocolTCP
	case ProtocolTCP, ProtocolUDP:
	default:
		return o, fmt.Errorf("traffic: protocol %q: want %s or %s", o.Protocol, ProtocolTCP, ProtocolUDP)
	}
	if o.SourcePort < 0 || o.SourcePort > 65535 {
		return o, fmt.Errorf("traffic: source port %d: want 1..65535", o.SourcePort)
	}
	if o.SourcePort != 0 && o.Protocol == ProtocolTCP && o.Connections > 1 {
		return o, fmt.Errorf("traffic: source port %d over tcp: one connection only (the next would find the port in TIME_WAIT)", o.SourcePort)
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
	if o.SourcePort != 0 {
		o.Parallelism = 1 // one socket at a time can own the port
	}
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
	if o.Protocol == ProtocolUDP {
		if _, err := udpCommand(o.Path); err != nil {
			return o, err
		}
	}
	return o, nil
}
