package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/tools/bench/report"
)

// trafficRun is one run of the traffic generator in the client pod.
type trafficRun struct {
	target      netip.AddrPort
	connections int
	parallelism int
	deadline    time.Duration // the run's own bound
}

// runTraffic runs `svclab traffic --raw` in the client pod (ip netns exec
// replaces itself with it, so the process waited for is the generator)
// and returns its result and its CPU time, from the rusage the kernel
// gives when it ends. ctx kills it.
func (t *trafficLab) runTraffic(ctx context.Context, binary string, r trafficRun) (*traffic.Result, report.ProcessCPU, error) {
	opts := traffic.Options{Target: r.target.String(), Connections: r.connections, Parallelism: r.parallelism, Deadline: r.deadline}
	cmd, err := t.lab.Command(t.client, selfexec.Argv(binary, &selfexec.Traffic{Options: opts, Raw: true})...)
	if err != nil {
		return nil, report.ProcessCPU{}, err
	}
	out, err := output(ctx, cmd)
	if err != nil {
		return nil, report.ProcessCPU{}, fmt.Errorf("traffic from %s to %s: %w", t.client, r.target, err)
	}
	var res traffic.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, report.ProcessCPU{}, fmt.Errorf("traffic from %s to %s: reading its result: %w", t.client, r.target, err)
	}
	return &res, report.ProcessCPU{User: cmd.ProcessState.UserTime(), System: cmd.ProcessState.SystemTime()}, nil
}

// sample runs the traffic and summarises it: its connections' connect
// times, its own elapsed time, and its CPU time less start.
func (t *trafficLab) sample(ctx context.Context, binary string, r trafficRun, start report.ProcessCPU) (report.TrafficSample, error) {
	res, cpu, err := t.runTraffic(ctx, binary, r)
	if err != nil {
		return report.TrafficSample{}, err
	}
	var connects []time.Duration
	for _, c := range res.Connections {
		if c.Failure == "" {
			connects = append(connects, c.Connect)
		}
	}
	return report.NewTrafficSample(connects, res.Attempted, res.Elapsed, cpu.Less(start), res.DeadlineExceeded), nil
}

// startRuns is how many one-connection runs measure the start-up's CPU.
const startRuns = 3

// startCPU is the least CPU time of startRuns one-connection runs to
// target (user and system each): the generator's start-up, which every
// run pays once. It is also the check that the target answers: a failed
// connection is an error.
func (t *trafficLab) startCPU(ctx context.Context, binary string, target netip.AddrPort) (report.ProcessCPU, error) {
	var least report.ProcessCPU
	for i := range startRuns {
		res, cpu, err := t.runTraffic(ctx, binary, trafficRun{target: target, connections: 1, parallelism: 1, deadline: 10 * time.Second})
		if err != nil {
			return report.ProcessCPU{}, err
		}
		if res.Succeeded != 1 {
			return report.ProcessCPU{}, fmt.Errorf("traffic from %s to %s: the first connection failed: %v", t.client, target, res.Failures)
		}
		if i == 0 || cpu.Total() < least.Total() {
			least = cpu
		}
	}
	return least, nil
}

// svclabBinary is the svclab executable the client pod runs: the lab
// options' Binary, else this program.
func svclabBinary(binary string) (string, error) {
	if binary != "" {
		return binary, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the svclab binary to run in the client pod: %w", err)
	}
	return exe, nil
}
