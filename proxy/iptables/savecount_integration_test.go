package iptables_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	saves := recordExecs(t, "iptables-nft-save")
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

// recordExecs puts a program of that name first in PATH that logs its
// arguments and runs the real one; the returned func hands out, and
// forgets, what ran.
func recordExecs(t *testing.T, name string) func() []string {
	t.Helper()
	real, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s: %v (install the iptables package)", name, err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "execs")
	shim := fmt.Sprintf("#!/bin/sh\necho \"$*\" >>%s\nexec %s \"$@\"\n", log, real)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() []string {
		data, err := os.ReadFile(log)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(log)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
}
