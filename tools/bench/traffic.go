package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/bench/report"
)

// TrafficOptions say what `svclab bench traffic` measures. Every run is
// bounded in count (Connections) and time (RunDeadline), the whole
// benchmark by Timeout.
type TrafficOptions struct {
	Modes []Mode
	// Services is how many ClusterIP Services the lab holds, all with the
	// server as their endpoint; the target is the last (default 1).
	Services int
	// Connections is how many new connections one run makes (default
	// DefaultTrafficConnections).
	Connections int
	// Parallelism are the numbers of connections open at once to measure,
	// ascending (default 1, 2, 4, 8).
	Parallelism []int
	// Repetitions is how many times each (mode, parallelism, target) runs
	// (default 3).
	Repetitions int
	// RunDeadline bounds one run (default 60 s): connections not started
	// by then are not made.
	RunDeadline time.Duration
	// Timeout bounds the whole benchmark (default 15 minutes): when it
	// passes, the run under way is killed, its lab deleted, and the result
	// holds what was measured.
	Timeout time.Duration
	// Lab are the lab operations' options; Out receives progress lines.
	Lab netns.Options
}

// Defaults and bounds of TrafficOptions.
const (
	DefaultTrafficConnections = 20000
	DefaultRepetitions        = 3
	// MaxTrafficConnections bounds one run: with TIME_WAIT reuse after a
	// second, more would need a faster client than any lab's.
	MaxTrafficConnections = 100000
	MaxParallelism        = 64
	MaxRepetitions        = 20
)

// DefaultParallelism are the parallelisms measured when none are given.
var DefaultParallelism = []int{1, 2, 4, 8}

// ParseParallelism reads --parallelism: a comma-separated list of numbers
// 1…MaxParallelism, returned ascending without repeats.
func ParseParallelism(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > MaxParallelism {
			return nil, fmt.Errorf("--parallelism: %q: want a number of connections at once from 1 to %d", f, MaxParallelism)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// withDefaults checks o and fills its zero values.
func (o TrafficOptions) withDefaults() (TrafficOptions, error) {
	if len(o.Modes) == 0 {
		return o, errors.New("bench traffic: no modes to measure")
	}
	if o.Services == 0 {
		o.Services = 1
	}
	if o.Connections == 0 {
		o.Connections = DefaultTrafficConnections
	}
	if o.Parallelism == nil {
		o.Parallelism = DefaultParallelism
	}
	if o.Repetitions == 0 {
		o.Repetitions = DefaultRepetitions
	}
	if o.RunDeadline == 0 {
		o.RunDeadline = time.Minute
	}
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Minute
	}
	switch {
	case o.Services < 1 || o.Services > MaxServices:
		return o, fmt.Errorf("--services %d: want 1 to %d", o.Services, MaxServices)
	case o.Connections < 1 || o.Connections > MaxTrafficConnections:
		return o, fmt.Errorf("--connections %d: want 1 to %d", o.Connections, MaxTrafficConnections)
	case o.Repetitions < 1 || o.Repetitions > MaxRepetitions:
		return o, fmt.Errorf("--repetitions %d: want 1 to %d", o.Repetitions, MaxRepetitions)
	case o.RunDeadline < 0 || o.Timeout < 0:
		return o, errors.New("--run-deadline and --timeout must not be negative")
	}
	if o.Lab.Out == nil {
		o.Lab.Out = io.Discard
	}
	return o, nil
}

// RunTraffic measures every mode at every parallelism, a lab of its own
// per mode. It returns what it measured; an error only for options it
// cannot run with.
func RunTraffic(ctx context.Context, o TrafficOptions) (*report.TrafficResult, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	binary, err := svclabBinary(o.Lab.Binary)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res := &report.TrafficResult{Machine: machine(), Config: report.TrafficConfig{
		Services: o.Services, Connections: o.Connections, Parallelism: o.Parallelism, Repetitions: o.Repetitions,
		RunDeadlineMs: ms(o.RunDeadline), TimeoutMs: ms(o.Timeout)}}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for _, m := range o.Modes {
		res.Config.Modes = append(res.Config.Modes, m.Name)
		var runs []report.TrafficRun
		if res.Stopped != "" {
			runs = trafficRows(m, o.Parallelism, report.TrafficRun{Skipped: "not run: " + res.Stopped})
		} else {
			fmt.Fprintf(o.Lab.Out, "bench traffic: %s…\n", m.Name)
			runs = measureTraffic(ctx, o, binary, m)
			if ctx.Err() != nil {
				res.Stopped = stopReason(ctx, o.Timeout)
			}
		}
		res.Runs = append(res.Runs, runs...)
	}
	for i := range res.Runs {
		res.Runs[i].Compare(res.Machine.CPUs)
	}
	res.ElapsedMs = ms(time.Since(start))
	return res, nil
}

// trafficRows are a mode's rows, one per parallelism, each a copy of like.
func trafficRows(m Mode, parallelism []int, like report.TrafficRun) []report.TrafficRun {
	runs := make([]report.TrafficRun, len(parallelism))
	for i, p := range parallelism {
		runs[i] = like
		runs[i].Mode, runs[i].Parallelism = m.Name, p
	}
	return runs
}

// measureTraffic is one mode, on a lab of its own: built, measured and
// deleted. A failure part way keeps the repetitions measured before it.
func measureTraffic(ctx context.Context, o TrafficOptions, binary string, m Mode) []report.TrafficRun {
	if why := unsupported(m); why != "" {
		return trafficRows(m, o.Parallelism, report.TrafficRun{Skipped: why})
	}
	runs := trafficRows(m, o.Parallelism, report.TrafficRun{})
	fail := func(err error) []report.TrafficRun {
		if skip := notImplemented(m, err); skip != "" {
			return trafficRows(m, o.Parallelism, report.TrafficRun{Skipped: skip})
		}
		msg := err.Error()
		if ctx.Err() != nil {
			msg = stopReason(ctx, o.Timeout) + ": " + msg
		}
		for i := range runs {
			if !runs[i].Measured() {
				runs[i].Error = msg
			}
		}
		return runs
	}
	dir, err := os.MkdirTemp("", "svclab-bench-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	lab, err := createTrafficLab(ctx, dir, m, o.Lab)
	if err != nil {
		return fail(err)
	}
	defer netns.Delete(lab.Name()) //nolint:errcheck // best effort; `svclab get leftovers` shows a lab left behind
	t, err := setUpTrafficLab(ctx, lab, dir, m, o.Services, labOptions(ctx, o.Lab))
	if err != nil {
		return fail(err)
	}
	if err := t.measureRepetitions(ctx, o, binary, runs); err != nil {
		return fail(err)
	}
	return runs
}

// measureRepetitions fills runs (one per parallelism), after measuring
// each target's start-up CPU (which checks that it answers): repetitions in the
// outer loop, so that a slow moment of the machine spreads over every
// parallelism; in each, the cluster IP and the pod IP one after the
// other, which goes first alternating, each run on a flushed conntrack
// table.
func (t *trafficLab) measureRepetitions(ctx context.Context, o TrafficOptions, binary string, runs []report.TrafficRun) error {
	startCluster, err := t.startCPU(ctx, binary, t.clusterIP)
	if err != nil {
		return err
	}
	startPod, err := t.startCPU(ctx, binary, t.podIP)
	if err != nil {
		return err
	}
	for i := range runs {
		runs[i].ClusterIP = &report.TrafficPath{Target: t.clusterIP.String(), From: t.client, StartCPUMs: ms(startCluster.Total())}
		runs[i].PodIP = &report.TrafficPath{Target: t.podIP.String(), From: t.client, StartCPUMs: ms(startPod.Total())}
	}
	for rep := range o.Repetitions {
		for i := range runs {
			legs := []struct {
				addr  netip.AddrPort
				path  *report.TrafficPath
				start report.ProcessCPU
			}{{t.clusterIP, runs[i].ClusterIP, startCluster}, {t.podIP, runs[i].PodIP, startPod}}
			if rep%2 == 1 {
				slices.Reverse(legs)
			}
			fmt.Fprintf(o.Lab.Out, "bench traffic: %s, parallelism %d, repetition %d of %d\n", runs[i].Mode, runs[i].Parallelism, rep+1, o.Repetitions)
			for _, leg := range legs {
				if err := t.flushNodeConntrack(); err != nil {
					return err
				}
				s, err := t.sample(ctx, binary, trafficRun{
					target: leg.addr, connections: o.Connections, parallelism: runs[i].Parallelism,
					deadline: runDeadline(ctx, o.RunDeadline)}, leg.start)
				if err != nil {
					return err
				}
				leg.path.Samples = append(leg.path.Samples, s)
				leg.path.Summarize()
			}
		}
	}
	return nil
}

// runDeadline is the run's bound: its own, or the time the benchmark has
// left when that is shorter.
func runDeadline(ctx context.Context, own time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Millisecond, min(own, time.Until(dl)))
	}
	return own
}
