package bench

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	vnetns "github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/bench/report"
)

// warmUp connections per target are made, and not counted, before the
// measured ones: the first packets of a lab also resolve neighbours (ARP
// on the pod's link and the bridge), which is no Service lookup.
const warmUp = 3

// dialTimeout bounds one connect; a connection that takes longer counts
// as failed.
const dialTimeout = 2 * time.Second

// target is a Service to connect to.
type target struct {
	name string // namespace/name
	addr netip.AddrPort
}

// connectLatencies opens n fresh TCP connections to each target from the
// client pod, alternating between the targets so that both see the same
// moment of the node, and times each connect (SYN out, through the node's
// rules and conntrack, SYN-ACK back). Every connection is closed at once
// with a reset, so no TIME_WAIT entry piles up on the client. The dials
// run on one thread switched into the pod's namespace: real sockets, real
// kernel path.
func connectLatencies(ctx context.Context, l *netns.Lab, clientPod string, n int, targets []target) ([]report.Latency, error) {
	nsName, err := l.Namespace(clientPod)
	if err != nil {
		return nil, err
	}
	h, err := vnetns.GetFromName(nsName)
	if err != nil {
		return nil, fmt.Errorf("network namespace %s: %w", nsName, err)
	}
	defer h.Close()
	samples := make([][]time.Duration, len(targets))
	failures := make([]int, len(targets))
	err = nsthread.Do(nsName, h, func() error {
		for i := range warmUp + n {
			for k, t := range targets {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				d, err := connectOnce(ctx, t.addr)
				switch {
				case i < warmUp:
				case err != nil:
					failures[k]++
				default:
					samples[k] = append(samples[k], d)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]report.Latency, len(targets))
	for k, t := range targets {
		out[k] = report.Summarize(samples[k], failures[k])
		out[k].Service, out[k].Target, out[k].From = t.name, t.addr.String(), clientPod
	}
	return out, nil
}

// connectOnce times one TCP connect to addr and resets the connection.
func connectOnce(ctx context.Context, addr netip.AddrPort) (time.Duration, error) {
	d := net.Dialer{Timeout: dialTimeout}
	start := time.Now()
	conn, err := d.DialContext(ctx, "tcp4", addr.String())
	took := time.Since(start)
	if err != nil {
		return took, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) //nolint:errcheck // best effort: a FIN instead of a reset is fine too
	}
	conn.Close()
	return took, nil
}
