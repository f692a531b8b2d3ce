package kit

import (
	"net/netip"
	"time"

	"github.com/svclab/svclab/internal/vm"
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
	// Timeout bounds each connection; default ConnectionTimeout().
	Timeout time.Duration
}

// Bounds of the scenarios' traffic: generous, as they only matter on a
// slow machine (a lab in a TCG VM), and a spec that asserts how fast an
// answer comes asserts it well under them.
const (
	TrafficTimeout  = 10 * time.Second
	TrafficDeadline = 10 * time.Minute
)

// vmTrafficTimeout bounds a connection inside svclab's VM: in CI, on one
// emulated CPU beside the other VM suites, 2 of 50 connections of the
// IPVS sh spec went past TrafficTimeout.
const vmTrafficTimeout = 30 * time.Second

// ConnectionTimeout is the bound of one connection expected to succeed:
// TrafficTimeout here, vmTrafficTimeout in svclab's VM. A spec that
// expects connections to be dropped sets its own, shorter, timeout.
func ConnectionTimeout() time.Duration {
	if vm.InGuest() {
		return vmTrafficTimeout
	}
	return TrafficTimeout
}

// vmTrafficParallelism is how many connections the scenarios keep open at
// once inside svclab's VM ($SVCLAB_VM=1): there every connection waits
// for the ones before it on one emulated CPU, and with the client's
// default of 16 open a connection's wait went past TrafficTimeout (one of
// 50 in an IPVS spec in CI). With 4, a connection waits for 3 others.
const vmTrafficParallelism = 4

// TrafficParallelism is how many connections the scenarios keep open at
// once here: the traffic client's default, vmTrafficParallelism in
// svclab's VM.
func TrafficParallelism() int {
	if vm.InGuest() {
		return vmTrafficParallelism
	}
	return 0 // traffic.DefaultParallelism
}

// Options are the traffic client's options for connections to target.
func (o TrafficOptions) Options(target netip.AddrPort) traffic.Options {
	timeout := o.Timeout
	if timeout == 0 {
		timeout = ConnectionTimeout()
	}
	return traffic.Options{
		Target: target.String(), Protocol: o.Protocol, Path: o.Path, SourcePort: o.SourcePort,
		Connections: o.Connections, Timeout: timeout, Deadline: TrafficDeadline, Parallelism: TrafficParallelism(),
	}
}
