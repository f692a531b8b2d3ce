package traffic

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Result is the outcome of a Run.
type Result struct {
	Target string `json:"target"`
	// Protocol is Options.Protocol: tcp or udp.
	Protocol string `json:"protocol,omitempty"`
	// Expected and Alpha are Options.Expected and Options.Alpha, for Report.
	Expected []string `json:"expected,omitempty"`
	Alpha    float64  `json:"alpha,omitempty"`
	// Requested is Options.Connections; Attempted may be fewer when the
	// deadline stopped the run.
	Requested int `json:"requested"`
	Attempted int `json:"attempted"`
	Succeeded int `json:"succeeded"`
	// Backends counts successful connections per backend name.
	Backends map[string]int `json:"backends"`
	// Failures counts failed connections per kind.
	Failures map[FailureKind]int `json:"failures"`
	// Connections lists every attempted connection, by Index.
	Connections []Connection  `json:"connections"`
	Elapsed     time.Duration `json:"elapsedNanos"`
	// DeadlineExceeded is set when the overall deadline (or ctx) ended the
	// run before every connection was attempted.
	DeadlineExceeded bool `json:"deadlineExceeded"`
}

// Failed is the number of attempted connections that failed.
func (r *Result) Failed() int { return r.Attempted - r.Succeeded }

// Run makes o.Connections new connections to o.Target and returns what
// each gave. It returns an error only for invalid options: connection
// failures are counted in the Result. It returns when every connection is
// done or, at the latest, soon after o.Deadline (or ctx's end): that stops
// new connections and cuts in-flight ones short, which count as timeouts.
func Run(ctx context.Context, o Options) (*Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	dialer := newDialer(o)
	ports := newSourcePorts(o)

	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, o.Deadline)
	defer cancel()

	// A context's Err is set by a timer that may fire late on a busy
	// machine; the clock says sooner whether the run is over.
	runDeadline, _ := runCtx.Deadline()
	over := func() bool { return runCtx.Err() != nil || !time.Now().Before(runDeadline) }

	conns := make([]Connection, o.Connections)
	attempted := make([]bool, o.Connections)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range o.Parallelism {
		wg.Go(func() {
			for !over() {
				i := int(next.Add(1) - 1)
				if i >= o.Connections {
					return
				}
				conns[i] = connectOnce(runCtx, dialer, ports, o, start, i)
				attempted[i] = true
			}
		})
	}
	wg.Wait()

	res := &Result{
		Target:    o.Target,
		Protocol:  o.Protocol,
		Expected:  append([]string(nil), o.Expected...),
		Alpha:     o.Alpha,
		Requested: o.Connections,
		Backends:  map[string]int{},
		Failures:  map[FailureKind]int{},
		Elapsed:   time.Since(start),
	}
	for i, c := range conns {
		if !attempted[i] {
			res.DeadlineExceeded = true
			continue
		}
		res.Attempted++
		res.Connections = append(res.Connections, c)
		if c.Failure == "" {
			res.Succeeded++
			res.Backends[c.Backend]++
		} else {
			res.Failures[c.Failure]++
		}
	}
	return res, nil
}

// newDialer dials from o.SourceIP and o.SourcePort when they are set.
func newDialer(o Options) *net.Dialer {
	if o.SourceIP == "" && o.SourcePort == 0 {
		return &net.Dialer{}
	}
	ip := net.ParseIP(o.SourceIP) // nil: any address
	if o.Protocol == ProtocolUDP {
		return &net.Dialer{LocalAddr: &net.UDPAddr{IP: ip, Port: o.SourcePort}}
	}
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip, Port: o.SourcePort}}
}
