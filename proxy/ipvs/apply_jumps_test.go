package ipvs

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel/kerneltest"
)

// batchingIPTables is fakeIPTables that can also ensure jumps together
// (iptkernel.JumpEnsurer, as the ExecRunner): each call is recorded and
// leaves the tables as the rules ensured one by one would.
type batchingIPTables struct {
	*fakeIPTables
	batches [][]iptkernel.JumpRule
	fail    error
}

func (b *batchingIPTables) EnsureJumps(rules []iptkernel.JumpRule) (iptkernel.TableChains, error) {
	b.batches = append(b.batches, slices.Clone(rules))
	if b.fail != nil {
		return nil, b.fail
	}
	for _, r := range rules {
		if err := b.fakeIPTables.EnsureJump(r); err != nil {
			return nil, err
		}
	}
	b.fakeIPTables.jumps -= len(rules) // count only single EnsureJump calls
	return nil, nil
}

func newBatchingBackend(t *testing.T) (*Backend, *batchingIPTables) {
	t.Helper()
	ipt := &batchingIPTables{fakeIPTables: newFakeIPTables()}
	b, err := New(kerneltest.New(nodeIP.String(), nodeIP2.String()), ipt, Options{ClusterCIDR: prefix(clusterPod), KernelRelease: "6.1.0-18-amd64"}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b, ipt
}

// TestApplyEnsuresJumpsTogether: a full sync's jumps go to the runner in
// one EnsureJumps call, in the plan's order, and the tables end as with
// a runner that ensures them one at a time.
func TestApplyEnsuresJumpsTogether(t *testing.T) {
	snap := snapshot(kubeDNS()...)
	b, ipt := newBatchingBackend(t)
	res := mustSync(t, b, snap)
	var want []iptkernel.JumpRule
	for _, op := range res.Plan {
		if op.Kind == OpEnsureJump {
			want = append(want, op.Jump)
		}
	}
	if len(want) < 2 {
		t.Fatalf("a first sync's plan has %d jumps:\n%s", len(want), res.Plan)
	}
	if len(ipt.batches) != 1 || !reflect.DeepEqual(ipt.batches[0], want) || ipt.jumps != 0 {
		t.Errorf("EnsureJumps calls %v (single EnsureJump calls %d), want one with the plan's %d jumps in order", ipt.batches, ipt.jumps, len(want))
	}
	if res.Ops != len(res.Plan) {
		t.Errorf("%d of %d ops counted as done", res.Ops, len(res.Plan))
	}

	single, _, oneByOne := newTestBackend(t, Options{})
	mustSync(t, single, snap)
	for _, table := range []string{"nat", "filter"} {
		got, _ := ipt.Save(table)
		want, _ := oneByOne.Save(table)
		if string(got) != string(want) {
			t.Errorf("table %s with the jumps ensured together:\n%s\none by one:\n%s", table, got, want)
		}
	}

	// A sync that knows what it applied ensures no jumps.
	ipt.batches = nil
	mustSync(t, b, snap)
	if len(ipt.batches) != 0 || ipt.jumps != 0 {
		t.Errorf("a second sync ensured jumps again: %v, %d", ipt.batches, ipt.jumps)
	}
}

// TestApplyStopsOnFailedJumps: when ensuring the jumps fails the sync
// stops there, as a failed EnsureJump op stops it, naming what failed.
func TestApplyStopsOnFailedJumps(t *testing.T) {
	b, ipt := newBatchingBackend(t)
	ipt.fail = errors.New("injected")
	res, err := b.Sync(snapshot(kubeDNS()...))
	if err == nil || !strings.Contains(err.Error(), "iptables jumps into the ipvs mode's chains: injected") {
		t.Fatalf("Sync error %v", err)
	}
	if len(ipt.restores) != 0 {
		t.Errorf("restored after the jumps failed: %d restores", len(ipt.restores))
	}
	if res.Full != true {
		t.Error("first sync not full")
	}
}
