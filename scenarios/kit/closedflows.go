package kit

import (
	"time"

	"github.com/svclab/svclab/labs/agents/traffic"
)

// CloseTimeout is how long conntrack keeps a TCP entry in CLOSE (after an
// RST): the kernel's default net.netfilter.nf_conntrack_tcp_timeout_close,
// which neither kube-proxy (its conntrack settings are established and
// close_wait) nor svclab changes. Now and then a server pod's kernel
// answers the client's last ACK with an RST (conntrack events: FIN_WAIT,
// LAST_ACK, TIME_WAIT, then CLOSE 24 µs later; 2 in 179,521 connections
// to a lab's Service on the host): that connection's entry is gone
// CloseTimeout after it ended, not TIME_WAIT's 120 s.
const CloseTimeout = 10 * time.Second

// RunClock places a traffic run's connections in time: the run's length
// by the client's clock (which may be another machine's, so it measures
// only within the run) and a moment after the run ended by this process's.
type RunClock struct {
	Elapsed time.Duration // the whole run's, from its result
	After   time.Time     // taken after the run returned
}

// ClockOf is the clock of a run whose result res has just been returned.
func ClockOf(res *traffic.Result) RunClock {
	return RunClock{Elapsed: res.Elapsed, After: time.Now()}
}

// EndedBefore is at least how long before dumped (by this process's
// clock) connection c ended: the run went on for Elapsed − (c.Start +
// c.Duration) after it, and then dumped − After passed.
func (r RunClock) EndedBefore(c traffic.Connection, dumped time.Time) time.Duration {
	return dumped.Sub(r.After) + r.Elapsed - (c.Start + c.Duration)
}

// ClosedLongEnough says whether a missing conntrack entry of connection c,
// in a table dumped from the moment dumped on, can be the CLOSE state's
// expiry: c ended at least CloseTimeout before the dump.
func (r RunClock) ClosedLongEnough(c traffic.Connection, dumped time.Time) bool {
	return r.EndedBefore(c, dumped) >= CloseTimeout
}
