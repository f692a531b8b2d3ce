package upstream

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// syncGuestEnv carries the in-VM test's sizes (services, endpoints,
// changes) to TestSyncBenchGuestProcess.
const syncGuestEnv = "SVCLAB_TEST_SYNC_GUEST"

// TestSyncBenchGuestProcess is the in-VM run of
// TestIntegrationSyncBenchIPVSInVM when the test binary runs as it in the
// VM (syncGuestEnv set): the ipvs benchmark on the guest's kernel, its
// result as JSON on stdout, then the IPVS check on an empty namespace;
// otherwise it has nothing to do.
func TestSyncBenchGuestProcess(t *testing.T) {
	var sizes []int
	for _, f := range strings.Fields(os.Getenv(syncGuestEnv)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
	}
	if len(sizes) != 3 {
		t.Skip("runs only as the in-VM sync benchmark")
	}
	useTestWorkers(t)
	res, err := RunSyncBench(SyncBenchOptions{Mode: ModeIPVS, Services: sizes[0], Endpoints: sizes[1], Changes: sizes[2], FullResyncs: sizes[2], Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		t.Fatal(err)
	}
	ipvsCheckFailsWhenTheChangeIsMissing(t)
}

// ipvsCheckFailsWhenTheChangeIsMissing: the IPVS check does not pass on
// a kernel that lacks the change (this test's namespace has no virtual
// servers).
func ipvsCheckFailsWhenTheChangeIsMissing(t *testing.T) {
	svc, sl := modeltest.ClusterObjects(123456, 2)
	check, err := newKernelCheck(ModeIPVS, []*corev1.Service{svc})
	if err != nil {
		t.Fatal(err)
	}
	if err := check.service(svc); err == nil {
		t.Error("ipvs: the service check passed with no virtual servers")
	}
	if err := check.endpoint(sl); err == nil {
		t.Error("ipvs: the endpoint check passed with no virtual servers")
	}
}

// TestIntegrationSyncBenchIPVSInVM: a tiny ipvs benchmark runs in svclab's
// VM when this kernel has no IPVS (directly when it has); both sides take
// every step, each change is found in their namespace's kernel (the run
// fails otherwise), and each side's writes are counted: upstream's ipset
// and netlink calls, svclab's netlink calls, and for the changes svclab's
// fewer than upstream's (it does not re-read every virtual server).
func TestIntegrationSyncBenchIPVSInVM(t *testing.T) {
	requireNetns(t)
	roottest.Require(t, "boots a VM and programs IPVS")
	if os.Getenv("SVCLAB_VM") == "1" {
		t.Skip("already inside svclab's VM")
	}
	const services, endpoints, changes = 20, 2, 2
	saved := syncBenchGuestCommand
	t.Cleanup(func() { syncBenchGuestCommand = saved })
	syncBenchGuestCommand = func(SyncBenchOptions) ([]string, map[string]string, error) {
		exe, err := os.Executable()
		return []string{exe, "-test.run=^TestSyncBenchGuestProcess$"},
			map[string]string{syncGuestEnv: fmt.Sprintf("%d %d %d", services, endpoints, changes)}, err
	}
	useTestWorkers(t)
	res, err := RunSyncBench(SyncBenchOptions{Mode: ModeIPVS, Services: services, Endpoints: endpoints, Changes: changes, FullResyncs: changes, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if needsVM(ModeIPVS) && !strings.HasPrefix(res.VM, "qemu") {
		t.Errorf("VM = %q, want the VM described", res.VM)
	}
	for _, st := range res.Steps {
		for _, side := range syncSides {
			s := st.Sides[side]
			want := changes
			if st.Step == StepCold {
				want = 1
			}
			if s.Samples != want || s.VisibleP50MS <= 0 || s.VisibleP95MS < s.VisibleP50MS {
				t.Errorf("%s, %s: %d samples, p50 %v ms, p95 %v ms; want %d samples, 0 < p50 ≤ p95", st.Step, side, s.Samples, s.VisibleP50MS, s.VisibleP95MS, want)
			}
			if s.ExecsPerSync[netlinkCounted] < 1 {
				t.Errorf("%s, %s: %v per sync, want netlink ≥ 1", st.Step, side, s.ExecsPerSync)
			}
		}
		u, s := st.Sides[SideUpstream].ExecsPerSync, st.Sides[SideSvclab].ExecsPerSync
		if u["ipset"] < 1 {
			t.Errorf("%s: upstream ran ipset %v times per sync, want ≥ 1", st.Step, u["ipset"])
		}
		if st.Step == StepCold && (u["iptables-restore"] < 1 || s["iptables-restore"] < 1) {
			t.Errorf("cold sync: iptables-restore per sync upstream %v, svclab %v; want ≥ 1 each", u, s)
		}
		if st.Step != StepCold && st.Step != StepFull && s[netlinkCounted] >= u[netlinkCounted] {
			t.Errorf("%s: svclab's netlink calls %v, upstream's %v: want fewer", st.Step, s[netlinkCounted], u[netlinkCounted])
		}
	}
	// svclab's full resync reads the kernel again; its partial syncs do not.
	if full, noop := svclabNetlink(res, StepFull), svclabNetlink(res, StepNoop); full <= noop {
		t.Errorf("svclab's netlink calls per sync: full resync %v, nothing changed %v; want the full one to read the kernel", full, noop)
	}
	for _, side := range syncSides {
		if m := res.Memory[side]; m == nil || m.RSSBytes <= 0 || m.HeapBytes <= 0 {
			t.Errorf("%s memory = %+v", side, m)
		}
	}
}

// testWriter logs what is written to it.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestSyncBenchOptionsAreCheckedFirst(t *testing.T) {
	for _, c := range []struct {
		opts SyncBenchOptions
		want string
	}{
		{SyncBenchOptions{Mode: "userspace", Services: 1, Endpoints: 1, Changes: 1}, `--mode "userspace": iptables, nftables or ipvs`},
		{SyncBenchOptions{Mode: ModeIPVS, Services: 0, Endpoints: 1, Changes: 1}, "must be at least 1"},
		{SyncBenchOptions{Mode: ModeIPVS, Services: 1, Endpoints: 1, Changes: 0}, "must be at least 1"},
		{SyncBenchOptions{Mode: ModeIPVS, Services: 1, Endpoints: 1, Changes: 1, FullResyncs: 2}, "--full-resyncs must be between 0 and --changes"},
	} {
		err := checkSyncBenchOptions(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.opts, err, c.want)
		}
	}
	if err := checkSyncBenchOptions(SyncBenchOptions{Mode: ModeIPVS, Services: 1, Endpoints: 1, Changes: 1}); err != nil {
		t.Errorf("ipvs refused: %v", err)
	}
}

func TestIPVSDefaultsToFewerServices(t *testing.T) {
	for mode, want := range map[string]int{ModeIPTables: 10000, ModeNFTables: 10000, ModeIPVS: 1000} {
		if got := DefaultSyncServicesFor(mode); got != want {
			t.Errorf("%s: %d Services by default, want %d", mode, got, want)
		}
	}
}

// TestTheGuestRunsTheSameOptions: the program in the VM gets the options
// given, answers in JSON, and is quiet unless progress is wanted.
func TestTheGuestRunsTheSameOptions(t *testing.T) {
	opts := SyncBenchOptions{Mode: ModeIPVS, Services: 1000, Endpoints: 10, Changes: 20, FullResyncs: 3, IPTables: "legacy"}
	want := []string{"--mode", "ipvs", "--services", "1000", "--endpoints", "10", "--changes", "20", "--full-resyncs", "3", "--iptables", "legacy", "-o", "json", "--quiet"}
	if got := syncBenchFlags(opts); !slices.Equal(got, want) {
		t.Errorf("flags = %q, want %q", got, want)
	}
	opts.Progress = os.Stderr
	if got := syncBenchFlags(opts); slices.Contains(got, "--quiet") {
		t.Errorf("flags with progress = %q, want no --quiet", got)
	}
}

func TestVMDescriptionComesFromItsLog(t *testing.T) {
	log := "cached build x is current\nvm: kernel 6.1.0-56-amd64, accelerator tcg (KVM probe: …)\n"
	if got, want := vmDescription(log), "qemu, accelerator tcg, Debian kernel 6.1.0-56-amd64"; got != want {
		t.Errorf("vmDescription = %q, want %q", got, want)
	}
	if got := vmDescription("nothing"); got != "qemu" {
		t.Errorf("vmDescription of a silent log = %q, want qemu", got)
	}
}

// TestTableOfAnEmulatedRunSaysRatiosOnly: a run in the VM under TCG says
// so above its table, and netlink calls are listed with the programs.
func TestTableOfAnEmulatedRunSaysRatiosOnly(t *testing.T) {
	side := func(netlink float64) *SideStats {
		return &SideStats{Samples: 1, VisibleP50MS: 10, VisibleP95MS: 12, SyncP50MS: 9, ExecsPerSync: map[string]float64{"netlink": netlink, "ipset": 2}}
	}
	res := &SyncBenchResult{Mode: ModeIPVS, Services: 20, Endpoints: 2, Changes: 1, Upstream: UpstreamRelease,
		VM:    "qemu, accelerator tcg, Debian kernel 6.1.0-56-amd64",
		Steps: []StepResult{{Step: StepEndpoint, Sides: map[string]*SideStats{SideUpstream: side(83.5), SideSvclab: side(4)}}}}
	var b strings.Builder
	if err := WriteSyncBenchTable(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Emulated:", "accelerator tcg", "compare the ratios only",
		"| one endpoint changed | 10.0 ms | 12.0 ms | 10.0 ms | 12.0 ms | 1.00 | 9.00 ms | 9.00 ms | ipset 2, netlink 83.5 | ipset 2, netlink 4 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	res.VM = ""
	b.Reset()
	if err := WriteSyncBenchTable(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "VM") || strings.Contains(b.String(), "Emulated") {
		t.Errorf("a run on this kernel mentions the VM:\n%s", b.String())
	}
}

// svclabNetlink is svclab's netlink calls per sync in step.
func svclabNetlink(res *SyncBenchResult, step string) float64 {
	for _, st := range res.Steps {
		if st.Step == step {
			return st.Sides[SideSvclab].ExecsPerSync[netlinkCounted]
		}
	}
	return 0
}
