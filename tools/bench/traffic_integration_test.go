package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/bench"
	"github.com/svclab/svclab/tools/bench/report"
)

// TestIntegrationTrafficBench runs a tiny bounded traffic benchmark in
// every mode and checks the structure and sanity of what it reports,
// never its timings: every mode this kernel has is measured (ipvs is
// skipped, saying why, where the kernel lacks IPVS) at both parallelisms,
// the cluster IP the last of the three Services';
// every repetition made all its connections to both targets; rates,
// connect times and CPU times are positive and consistent; the ratios are
// paired per repetition; the renderers take the result; no lab is left.
func TestIntegrationTrafficBench(t *testing.T) {
	roottest.Require(t, "builds labs (network namespaces, iptables, nftables)")
	modes, err := bench.ParseModes("iptables,nftables,ipvs")
	if err != nil {
		t.Fatal(err)
	}
	const conns, reps = 100, 2
	res, err := bench.RunTraffic(context.Background(), bench.TrafficOptions{
		Modes: modes, Services: 3, Connections: conns, Parallelism: []int{1, 4}, Repetitions: reps,
		RunDeadline: time.Minute, Timeout: 8 * time.Minute,
		Lab: netns.Options{Binary: roottest.SharedBinary(t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != "" || len(res.Runs) != 2*len(modes) {
		t.Fatalf("stopped %q with %d runs, want all %d", res.Stopped, len(res.Runs), 2*len(modes))
	}
	for _, run := range res.Runs {
		if run.Mode == "ipvs" && run.Skipped != "" {
			if !strings.Contains(run.Skipped, "needs IPVS") {
				t.Errorf("ipvs skipped for another reason: %s", run.Skipped)
			}
			continue
		}
		if !run.Measured() {
			t.Errorf("%s ×%d not measured: skipped %q, error %q", run.Mode, run.Parallelism, run.Skipped, run.Error)
			continue
		}
		checkTrafficPath(t, run, "cluster IP", run.ClusterIP, conns, reps)
		checkTrafficPath(t, run, "pod IP", run.PodIP, conns, reps)
		if run.ClusterIP.Target != "10.96.16.2:80" || run.PodIP.Target == run.ClusterIP.Target {
			t.Errorf("%s ×%d: targets %s and %s", run.Mode, run.Parallelism, run.ClusterIP.Target, run.PodIP.Target)
		}
		if run.RateRatio.N != reps || run.RateRatio.Min <= 0 || math.Abs(run.ServiceShare.Median-(1-run.RateRatio.Median)) > 1e-9 || len(run.Notes) < 2 {
			t.Errorf("%s ×%d: ratio %+v, share %+v, notes %q", run.Mode, run.Parallelism, run.RateRatio, run.ServiceShare, run.Notes)
		}
	}
	checkTrafficRenders(t, res)
	checkNoTrafficLabLeft(t)
}

// checkNoTrafficLabLeft fails for a traffic benchmark's lab or namespace
// still there (other benchmarks' labs may come and go meanwhile).
func checkNoTrafficLabLeft(t *testing.T) {
	t.Helper()
	names, err := netns.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "trbench-") {
			t.Errorf("lab %s left behind", n)
		}
	}
	out, err := exec.Command(hostprog.IP, "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "svclab-trbench-") {
		t.Errorf("namespaces left behind:\n%s", out)
	}
}

func checkTrafficPath(t *testing.T, run report.TrafficRun, name string, p *report.TrafficPath, conns, reps int) {
	t.Helper()
	if len(p.Samples) != reps || p.Failed != 0 || p.StartCPUMs <= 0 || p.From == "" {
		t.Errorf("%s ×%d %s: %d samples, %d failed, start CPU %gms, from %q", run.Mode, run.Parallelism, name, len(p.Samples), p.Failed, p.StartCPUMs, p.From)
	}
	for i, s := range p.Samples {
		if s.Attempted != conns || s.Succeeded != conns || s.DeadlineExceeded || s.ConnsPerSecond <= 0 || s.ElapsedMs <= 0 ||
			s.ConnectP50Ms <= 0 || s.ConnectP99Ms < s.ConnectP50Ms || s.CPUSeconds <= 0 || s.SystemSeconds > s.CPUSeconds {
			t.Errorf("%s ×%d %s repetition %d: %+v", run.Mode, run.Parallelism, name, i+1, s)
		}
	}
	if p.ConnsPerSecond.N != reps || p.ConnsPerSecond.Min > p.ConnsPerSecond.Median || p.ConnsPerSecond.Median > p.ConnsPerSecond.Max {
		t.Errorf("%s ×%d %s: spread %+v", run.Mode, run.Parallelism, name, p.ConnsPerSecond)
	}
}

func checkTrafficRenders(t *testing.T, res *report.TrafficResult) {
	t.Helper()
	var js bytes.Buffer
	if err := report.WriteTrafficJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	var back report.TrafficResult
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Runs) != len(res.Runs) {
		t.Errorf("JSON does not read back: %v", err)
	}
	var table bytes.Buffer
	if err := report.WriteTrafficTable(&table, res); err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Config.Modes {
		if !slices.ContainsFunc(strings.Split(table.String(), "\n"), func(line string) bool { return strings.HasPrefix(line, m+" ") }) {
			t.Errorf("the table has no row of %s:\n%s", m, table.String())
		}
	}
}
