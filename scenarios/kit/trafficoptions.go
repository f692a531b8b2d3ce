package kit

import (
	"net/netip"
	"time"

	"github.com/svclab/svclab/labs/agents/traffic"
)

// TrafficOptions say how Workspace.TrafficWith sends its connections.
type TrafficOptions struct {
	// Connections is how many connections (over UDP: exchanges, each from
	// a new socket) to make; at least 1.
	Connections int
	// Protocol is traffic.ProtocolTCP (the default) or traffic.ProtocolUDP.
	Protocol string
	// Path is the HTTP path to GET, or over UDP the command: /hostname
	// (the default), /clientip or /echo?msg=MSG.
	Path string
	// SourcePort, if set, is the one local port every connection comes
	// from, one at a time: over UDP, one conntrack entry for them all.
	SourcePort int
	// Timeout bounds each connection; default TrafficTimeout.
	Timeout time.Duration
}

// Bounds of the scenarios' traffic: generous, as they only matter on a
// slow machine (a lab in a TCG VM), and a spec that asserts how fast an
// answer comes asserts it well under them.
const (
	TrafficTimeout  = 10 * time.Second
	TrafficDeadline = 10 * time.Minute
)

// Options are the traffic client's options for connections to target.
func (o TrafficOptions) Options(target netip.AddrPort) traffic.Options {
	timeout := o.Timeout
	if timeout == 0 {
		timeout = TrafficTimeout
	}
	return traffic.Options{
		Target: target.String(), Protocol: o.Protocol, Path: o.Path, SourcePort: o.SourcePort,
		Connections: o.Connections, Timeout: timeout, Deadline: TrafficDeadline,
	}
}
