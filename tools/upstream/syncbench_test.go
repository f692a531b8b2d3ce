package upstream

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/proxy/model/modeltest"
)

// syncWorkerEnv carries a test worker's arguments (side, mode, services,
// endpoints) to TestSyncWorkerProcess.
const syncWorkerEnv = "SVCLAB_TEST_SYNC_WORKER"

// TestSyncWorkerProcess is the sync benchmark's worker when the test
// binary runs as one (syncWorkerEnv set); otherwise it has nothing to do.
func TestSyncWorkerProcess(t *testing.T) {
	args := strings.Fields(os.Getenv(syncWorkerEnv))
	if len(args) != 4 {
		t.Skip("runs only as the sync benchmark's worker")
	}
	services, _ := strconv.Atoi(args[2])
	endpoints, _ := strconv.Atoi(args[3])
	if err := RunSyncWorker(args[0], args[1], services, endpoints, os.Stdin, os.Stdout); err != nil {
		t.Fatal(err)
	}
}

// useTestWorkers makes RunSyncBench start this test binary as its workers.
func useTestWorkers(t *testing.T) {
	t.Helper()
	saved := syncWorkerCommand
	t.Cleanup(func() { syncWorkerCommand = saved })
	syncWorkerCommand = func(side, mode string, services, endpoints int) ([]string, []string) {
		return []string{"/proc/self/exe", "-test.run=^TestSyncWorkerProcess$"},
			[]string{fmt.Sprintf("%s=%s %s %d %d", syncWorkerEnv, side, mode, services, endpoints)}
	}
}

// TestIntegrationSyncBenchSeesEveryChangeInTheKernel: on the real kernel,
// both sides of each mode take every step, and each change is found in
// their namespace's kernel (RunSyncBench fails otherwise); the samples
// and the programs run are counted per side.
func TestIntegrationSyncBenchSeesEveryChangeInTheKernel(t *testing.T) {
	requireNetns(t)
	if os.Geteuid() != 0 {
		t.Skip("programs iptables and nftables in network namespaces: needs root")
	}
	useTestWorkers(t)
	for _, mode := range []string{ModeIPTables, ModeNFTables} {
		t.Run(mode, func(t *testing.T) {
			res, err := RunSyncBench(SyncBenchOptions{Mode: mode, Services: 30, Endpoints: 2, Changes: 2, FullResyncs: 2})
			if err != nil {
				t.Fatal(err)
			}
			program := map[string]string{ModeIPTables: "iptables-restore", ModeNFTables: "nft"}[mode]
			for _, st := range res.Steps {
				for _, side := range syncSides {
					s := st.Sides[side]
					want := 2
					if st.Step == StepCold {
						want = 1
					}
					if s.Samples != want || s.VisibleP50MS <= 0 || s.VisibleP95MS < s.VisibleP50MS {
						t.Errorf("%s, %s: %d samples, p50 %v ms, p95 %v ms; want %d samples, 0 < p50 ≤ p95", st.Step, side, s.Samples, s.VisibleP50MS, s.VisibleP95MS, want)
					}
					// svclab writes a partial nftables sync as one netlink
					// batch (nftables.NetlinkFirst), never through nft.
					written := program
					if mode == ModeNFTables && side == SideSvclab && (st.Step == StepEndpoint || st.Step == StepService) {
						written = netlinkCounted
						if s.ExecsPerSync["nft"] != 0 {
							t.Errorf("%s, svclab: nft per sync = %v, want none (a netlink batch)", st.Step, s.ExecsPerSync["nft"])
						}
					}
					if st.Step != StepNoop && s.ExecsPerSync[written] < 1 {
						t.Errorf("%s, %s: %s per sync = %v, want ≥ 1 (the change was written)", st.Step, side, written, s.ExecsPerSync)
					}
					// Every program svclab's exec runner runs is counted: a
					// cold sync saves filter and nat once each (for the
					// jumps, whose save also names the existing chains) and
					// restores twice (the missing jumps, then the rules).
					if mode == ModeIPTables && side == SideSvclab && st.Step == StepCold &&
						(s.ExecsPerSync["iptables-save"] != 2 || s.ExecsPerSync["iptables-restore"] != 2) {
						t.Errorf("cold sync, svclab: execs %v; want iptables-save 2, iptables-restore 2", s.ExecsPerSync)
					}
				}
			}
			for _, side := range syncSides {
				if m := res.Memory[side]; m == nil || m.RSSBytes <= 0 || m.HeapBytes <= 0 {
					t.Errorf("%s memory = %+v", side, m)
				}
			}
		})
	}
}

// TestIntegrationKernelCheckFailsWhenTheChangeIsMissing: the checks do
// not pass on a kernel that lacks the change (this test's namespace has
// no service rules).
func TestIntegrationKernelCheckFailsWhenTheChangeIsMissing(t *testing.T) {
	requireNetns(t)
	if os.Geteuid() != 0 {
		t.Skip("lists iptables and nftables: needs root")
	}
	svc, sl := modeltest.ClusterObjects(123456, 2)
	for _, mode := range []string{ModeIPTables, ModeNFTables} {
		check, err := newKernelCheck(mode, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := check.service(svc); err == nil {
			t.Errorf("%s: the service check passed with no rules", mode)
		}
		if err := check.endpoint(sl); err == nil {
			t.Errorf("%s: the endpoint check passed with no rules", mode)
		}
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 20; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    int
		want time.Duration
	}{{50, 10 * time.Millisecond}, {95, 19 * time.Millisecond}, {100, 20 * time.Millisecond}, {1, time.Millisecond}} {
		if got := percentile(d, c.p); got != c.want {
			t.Errorf("p%d = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile([]time.Duration{7}, 95); got != 7 {
		t.Errorf("p95 of one sample = %v, want it", got)
	}
}

func TestExecCountsSinceIsTheDifference(t *testing.T) {
	c := newExecCounts()
	c.add("/usr/sbin/iptables-restore", 1)
	before := c.snapshot()
	c.add("iptables-restore", 1)
	c.add("nft", 2)
	got := c.since(before)
	if len(got) != 2 || got["iptables-restore"] != 1 || got["nft"] != 2 {
		t.Fatalf("since = %v, want iptables-restore 1, nft 2", got)
	}
}
