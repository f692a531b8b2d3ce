package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/bench/report"
)

// Options say what to measure.
type Options struct {
	Services    []int  // numbers of Services, ascending
	Modes       []Mode // in the order to measure them
	Connections int    // fresh connections per target (default 200)
	// Timeout bounds the whole benchmark (default 10 minutes): when it
	// passes, the measurement under way stops, its lab is deleted, and the
	// result holds what was measured.
	Timeout time.Duration
	// Lab are the lab operations' options (Binary, RestartBackoff); Out
	// receives a progress line per measurement.
	Lab netns.Options
}

// DefaultConnections is how many fresh connections a target gets: with
// 200, the p99 is the second largest connect time.
const DefaultConnections = 200

// MaxConnections bounds --connections.
const MaxConnections = 100000

// Run measures every number of Services in every mode, the numbers in the
// outer loop: when the timeout stops it, every mode has its small sizes.
// It returns what it measured; an error only for options it cannot run
// with.
func Run(ctx context.Context, o Options) (*report.Result, error) {
	if len(o.Services) == 0 || len(o.Modes) == 0 {
		return nil, errors.New("bench dataplane: no Services or no modes to measure")
	}
	if o.Connections == 0 {
		o.Connections = DefaultConnections
	}
	if o.Connections < 1 || o.Connections > MaxConnections {
		return nil, fmt.Errorf("--connections %d: want 1 to %d", o.Connections, MaxConnections)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Lab.Out == nil {
		o.Lab.Out = io.Discard
	}
	start := time.Now()
	res := &report.Result{Machine: machine(), Config: report.Config{
		Services: o.Services, Connections: o.Connections, TimeoutMs: ms(o.Timeout)}}
	for _, m := range o.Modes {
		res.Config.Modes = append(res.Config.Modes, m.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for _, n := range o.Services {
		for _, m := range o.Modes {
			var run report.Run
			if res.Stopped != "" {
				run = report.Run{Mode: m.Name, Services: n, Skipped: "not run: " + res.Stopped}
			} else {
				fmt.Fprintf(o.Lab.Out, "bench: %s, %d Services…\n", m.Name, n)
				run = measure(ctx, o, m, n)
				if ctx.Err() != nil {
					res.Stopped = stopReason(ctx, o.Timeout)
					if run.Error != "" {
						run.Error = res.Stopped + ": " + run.Error
					}
				}
			}
			res.Runs = append(res.Runs, run)
		}
	}
	res.ElapsedMs = ms(time.Since(start))
	return res, nil
}

func stopReason(ctx context.Context, timeout time.Duration) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("--timeout %s reached", timeout)
	}
	return "interrupted"
}

// measure is one mode at one number of Services, on a lab of its own:
// built, measured and deleted.
func measure(ctx context.Context, o Options, m Mode, n int) report.Run {
	run := report.Run{Mode: m.Name, Services: n}
	skipped, err := onLabOfItsOwn(ctx, m, o.Lab, func(lab *netns.Lab, dir string) error {
		return measureOn(ctx, lab, dir, o, m, n, &run)
	})
	switch {
	case skipped != "":
		run.Skipped = skipped
	case err != nil:
		if skip := notImplemented(m, err); skip != "" {
			run.Skipped = skip
		} else {
			run.Error = err.Error()
		}
	}
	return run
}

// measureOn runs the steps of one measurement on its lab.
func measureOn(ctx context.Context, lab *netns.Lab, dir string, o Options, m Mode, n int, run *report.Run) error {
	opts := labOptions(ctx, o.Lab)
	client, err := startPods(ctx, lab, dir, m, opts)
	if err != nil {
		return err
	}
	last := probe{lab: lab, mode: m, ip: serviceIP(n - 1), name: serviceName(n - 1)}
	prog, cpu, err := programServices(ctx, lab, n, last, labOptions(ctx, o.Lab))
	if err != nil {
		return err
	}
	run.Programming, run.CPU = prog, cpu
	objects, what, err := last.count(ctx)
	if err != nil {
		return err
	}
	prog.KernelObjects = objects
	lat, err := connectLatencies(ctx, lab, client, o.Connections, []target{
		{name: namespace + "/" + serviceName(0), addr: addrPort(0)},
		{name: namespace + "/" + serviceName(n-1), addr: addrPort(n - 1)},
	})
	if err != nil {
		return err
	}
	run.Early, run.Late = &lat[0], &lat[1]
	run.Notes = notes(m, n, *prog, what, *cpu)
	return nil
}

func addrPort(i int) netip.AddrPort { return netip.AddrPortFrom(serviceIP(i), servicePort) }
