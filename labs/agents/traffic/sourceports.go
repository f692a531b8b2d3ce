package traffic

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// The kernel picks a UDP socket's ephemeral port at random and takes a
// closed socket's port back at once, so 31 exchanges of one run share a
// source port about once in 80 runs (measured on Linux 6.18, range
// 32768–60999). Two exchanges of one 5-tuple are one conntrack entry, and
// the second goes where the first went: not "a new socket, a new
// conntrack entry". A run's UDP exchanges therefore never reuse a source
// port: a socket given a port the run has used is held open (so the
// kernel cannot hand that port out again) while the next is dialed.

// maxFreshPortDials bounds the dials for one fresh port. The chance that a
// random pick of the range repeats a used port is used/range; only a run
// that has used most of the range needs more than a few.
const maxFreshPortDials = 64

// sourcePorts is the set of UDP source ports a run's exchanges have used.
type sourcePorts struct {
	mu   sync.Mutex
	used map[int]bool
}

// newSourcePorts is the ledger of a run, or nil when the run does not need
// one: over TCP (the client's TIME_WAIT already keeps a 4-tuple from coming
// back at once) and when Options.SourcePort fixes the port on purpose.
func newSourcePorts(o Options) *sourcePorts {
	if o.Protocol != ProtocolUDP || o.SourcePort != 0 {
		return nil
	}
	return &sourcePorts{used: map[int]bool{}}
}

// claim records port as used and tells whether no exchange had it before.
func (s *sourcePorts) claim(port int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used[port] {
		return false
	}
	s.used[port] = true
	return true
}

// dial dials o.Target until the socket's source port is one the run has not
// used (s nil: dials once). The sockets with used ports stay open until a
// fresh one is found, then close; nothing was sent on them.
func (s *sourcePorts) dial(ctx context.Context, dialer *net.Dialer, o Options) (net.Conn, error) {
	if s == nil {
		return dialer.DialContext(ctx, o.Protocol, o.Target)
	}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for range maxFreshPortDials {
		conn, err := dialer.DialContext(ctx, o.Protocol, o.Target)
		if err != nil {
			return nil, err
		}
		if addr, ok := conn.LocalAddr().(*net.UDPAddr); !ok || s.claim(addr.Port) {
			return conn, nil
		}
		held = append(held, conn)
	}
	return nil, fmt.Errorf("no UDP source port left that this run has not used, after %d dials", maxFreshPortDials)
}
