package iptables_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/kernel"
)

// TestIntegrationFullSyncSavesEachTableOnce: a full sync through the
// iptables binaries saves filter and nat once each (for the jumps) and
// learns the existing nat chains from that save: no second iptables-save
// of nat, as there was before; a partial sync saves nothing. The stale
// chain a full sync must delete is still deleted (the real-kernel check of
// what the renderer is told).
func TestIntegrationFullSyncSavesEachTableOnce(t *testing.T) {
	roottest.Require(t, "creates a network namespace and runs iptables in it")
	realSave, err := exec.LookPath("iptables-nft-save")
	if err != nil {
		t.Fatalf("iptables-nft-save: %v (install the iptables package)", err)
	}
	saves := roottest.RecordExecs(t, "iptables-nft-save", realSave)
	runner, err := kernel.NewExecRunner(kernel.ExecOptions{Backend: kernel.BackendNFT, NetNS: newTestNetns(t)})
	if err != nil {
		t.Fatalf("iptables nft backend unusable (install the iptables package): %v", err)
	}
	if err := runner.Restore([]byte("*nat\n:KUBE-SVC-STALESTALESTALE1 - [0:0]\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.RandomFully = runner.HasRandomFully()
	r := newRenderer(t, opts)
	c := packetFlowCluster()

	if res, err := iptables.Sync(runner, r, c.snapshot()); err != nil || !res.FullSync {
		t.Fatalf("first sync: full=%v, %v; want a full sync", res != nil && res.FullSync, err)
	}
	if got, want := saves(), []string{"-t filter", "-t nat"}; !slices.Equal(got, want) {
		t.Errorf("a full sync ran iptables-nft-save %q, want %q", got, want)
	}
	if saved := saveTables(t, runner); strings.Contains(saved, "KUBE-SVC-STALESTALESTALE1") {
		t.Errorf("the full sync left the stale chain:\n%s", saved)
	}
	saves()

	if res, err := iptables.Sync(runner, r, c.snapshot()); err != nil || res.FullSync {
		t.Fatalf("second sync: full=%v, %v; want a partial sync", res != nil && res.FullSync, err)
	}
	if got := saves(); len(got) != 0 {
		t.Errorf("a partial sync ran iptables-nft-save %q, want none", got)
	}
}
