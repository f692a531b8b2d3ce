package kube

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// fakeClock is time that passes only when the sweep sleeps; onSleep runs
// after each sleep with the new time (another run renewing its lease).
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	onSleep func(now time.Time)
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now, on := c.now, c.onSleep
	c.mu.Unlock()
	if on != nil {
		on(now)
	}
	return ctx.Err()
}

// stoppedRun is a run that started and changed the proxy's mode, then
// stopped renewing its heartbeat without cleaning up (as SIGKILL leaves
// it): its namespaces and its saved copy of the ConfigMap stay.
func stoppedRun(t *testing.T, cfg *rest.Config, id string) *Target {
	t.Helper()
	ctx := context.Background()
	run, err := New(ctx, cfg, Options{Source: "fake", Image: "i", RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.switchProxyMode(ctx, "nftables"); err != nil {
		t.Fatal(err)
	}
	run.lease.stop()
	return run
}

// setLeaseRenewed sets when a run's heartbeat was last renewed.
func setLeaseRenewed(f *fakeAPI, ns string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objs["leases"][ns+"/"+RunLeaseName]["spec"].(map[string]any)["renewTime"] = at.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// runNamespaces are the namespaces labelled as run id's.
func runNamespaces(f *fakeAPI, id string) []string {
	var names []string
	for _, ns := range f.list("namespaces", "") {
		if labels, _ := meta(ns)["labels"].(map[string]any); labels[RunLabel] == id {
			names = append(names, str(meta(ns)["name"]))
		}
	}
	return names
}

// TestEveryRunSweepsWhatAKilledRunLeft: a run killed long ago during the
// mode switch left its namespaces and the ConfigMap changed; the next run
// puts the ConfigMap back, deletes the namespaces, says so, then starts.
func TestEveryRunSweepsWhatAKilledRunLeft(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1", "n2")
	withKubeProxy(f)
	killed := stoppedRun(t, cfg, "run-a")
	setLeaseRenewed(f, killed.agentNS, time.Now().Add(-time.Hour))
	var out strings.Builder
	next, err := New(context.Background(), cfg, Options{Source: "fake", Image: "i", RunID: "run-b", Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close(context.Background())
	for _, want := range []string{
		"sweep: put back kube-system/kube-proxy as run run-a (killed) saved it",
		"sweep: deleted namespace " + killed.agentNS + ", left by run run-a",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output\n%s\ndoes not say %q", out.String(), want)
		}
	}
	if got := proxyConfigData(f); !maps.Equal(got, originalProxyConfig) {
		t.Errorf("the ConfigMap is\n%v\nwant it as it was\n%v", got, originalProxyConfig)
	}
	if f.get("configmaps", "kube-system", SavedProxyConfigName) != nil {
		t.Error("the saved copy is still there")
	}
	if left := runNamespaces(f, "run-a"); len(left) != 0 {
		t.Errorf("run-a's namespaces %v are still there", left)
	}
	if len(runNamespaces(f, "run-b")) != 1 {
		t.Errorf("run-b has namespaces %v, want its agent's", runNamespaces(f, "run-b"))
	}
}

// TestCleanupRemovesEveryObjectOfTheSuite: `svclab conformance cleanup`
// after a killed run: the ConfigMap as it was, no namespace of the
// suite's runs, no saved copy; a namespace labelled managed-by but by no
// run (the Job's, say) is left, and said so.
func TestCleanupRemovesEveryObjectOfTheSuite(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	withKubeProxy(f)
	killed := stoppedRun(t, cfg, "run-a")
	setLeaseRenewed(f, killed.agentNS, time.Now().Add(-time.Hour))
	f.put("namespaces", map[string]any{"metadata": map[string]any{"name": "svclab-conformance", "labels": map[string]any{ManagedByLabel: ManagedBy}}})
	var out strings.Builder
	if err := Cleanup(context.Background(), cfg, Options{Source: "fake", Out: &out}); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if nss := f.list("namespaces", ""); len(nss) != 1 || str(meta(nss[0])["name"]) != "svclab-conformance" {
		t.Errorf("namespaces left: %v, want svclab-conformance only", nss)
	}
	if got := proxyConfigData(f); !maps.Equal(got, originalProxyConfig) {
		t.Errorf("the ConfigMap is %v, want it as it was", got)
	}
	if !strings.Contains(out.String(), "left namespace svclab-conformance: labelled app.kubernetes.io/managed-by=svclab-conformance but not by a run") {
		t.Errorf("output\n%s\ndoes not name the namespace it left", out.String())
	}
}

// TestSweepLeavesARunningRunAlone: a run whose heartbeat is renewed while
// the sweep watches it still runs: its namespaces and its saved copy stay.
func TestSweepLeavesARunningRunAlone(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	withKubeProxy(f)
	running := stoppedRun(t, cfg, "run-a")
	start := time.Now()
	setLeaseRenewed(f, running.agentNS, start)
	var out strings.Builder
	sweeper, err := connect(context.Background(), cfg, Options{Source: "fake", RunID: "run-b", Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	sweeper.clock = &fakeClock{now: start.Add(3 * time.Second), onSleep: func(now time.Time) {
		if now.Sub(start) >= leaseRenewal {
			setLeaseRenewed(f, running.agentNS, now) // run-a's renewal
		}
	}}
	swept, err := sweeper.sweep(context.Background(), false)
	if err != nil || swept != 0 {
		t.Fatalf("sweep: %d swept, %v; want nothing", swept, err)
	}
	if !slices.Contains(runNamespaces(f, "run-a"), running.agentNS) {
		t.Error("the running run's namespace was deleted")
	}
	if f.get("configmaps", "kube-system", SavedProxyConfigName) == nil {
		t.Error("the running run's saved copy was restored")
	}
	for _, want := range []string{"watching its heartbeat", "left run run-a's namespaces (" + running.agentNS + "): it still runs", "that run still runs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output\n%s\ndoes not say %q", out.String(), want)
		}
	}
}

// TestSweepWaitsOutARecentlyKilledRun: a run killed seconds ago still has
// a fresh heartbeat; the sweep watches it for a whole lease, and sweeps
// the run when no renewal comes.
func TestSweepWaitsOutARecentlyKilledRun(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	withKubeProxy(f)
	killed := stoppedRun(t, cfg, "run-a")
	start := time.Now()
	setLeaseRenewed(f, killed.agentNS, start)
	var out strings.Builder
	sweeper, err := connect(context.Background(), cfg, Options{Source: "fake", RunID: "run-b", Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: start.Add(2 * time.Second)}
	sweeper.clock = clock
	if _, err := sweeper.sweep(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if waited := clock.Now().Sub(start.Add(2 * time.Second)); waited < leaseDuration {
		t.Errorf("swept after watching %s, want a whole lease (%s) without renewal", waited, leaseDuration)
	}
	if left := runNamespaces(f, "run-a"); len(left) != 0 {
		t.Errorf("run-a's namespaces %v are still there", left)
	}
	if got := proxyConfigData(f); !maps.Equal(got, originalProxyConfig) {
		t.Errorf("the ConfigMap is %v, want it as it was", got)
	}
}

// TestSweepRestartsAProxyOlderThanItsConfigMap: a restore interrupted
// after writing the ConfigMap back and before restarting the proxy left
// the data as saved but the pods on the other mode; the sweep restarts
// the pods that started before the ConfigMap's last write.
func TestSweepRestartsAProxyOlderThanItsConfigMap(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	deleted := withKubeProxy(f)
	killed := stoppedRun(t, cfg, "run-a")
	setLeaseRenewed(f, killed.agentNS, time.Now().Add(-time.Hour))
	f.mu.Lock()
	cm := f.objs["configmaps"]["kube-system/kube-proxy"]
	cm["data"] = maps.Clone(originalProxyConfig) // written back, then the restore was killed
	meta(cm)["managedFields"] = []any{map[string]any{"manager": "svclab", "operation": "Update", "time": time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}}
	f.mu.Unlock()
	before := deleted()
	if err := Cleanup(context.Background(), cfg, Options{Source: "fake"}); err != nil {
		t.Fatal(err)
	}
	if deleted() == before {
		t.Error("the proxy's pods, older than the ConfigMap's last write, were not restarted")
	}
	if f.get("configmaps", "kube-system", SavedProxyConfigName) != nil {
		t.Error("the saved copy is still there")
	}
}
