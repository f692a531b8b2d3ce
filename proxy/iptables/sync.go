package iptables

import (
	"fmt"

	"github.com/svclab/svclab/internal/iptsave"
	"github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// Sync renders snap and applies it through runner, keeping the renderer's
// bookkeeping right. It is the body of upstream's syncProxyRules after the
// change trackers:
//
//  1. before a full sync, ensure the jump rules from the built-in chains
//     (in one iptables-save per table and one iptables-restore, where
//     upstream runs three iptables per rule: kernel.JumpEnsurer) and
//     tell the renderer which nat chains exist, so that stale ones get
//     deleted: the chains the jumps' save read (upstream saves nat once
//     more; the jumps add no per-service chain), or, for a runner that
//     ensures jumps one by one, an iptables-save of nat (if it fails,
//     stale chains are just left behind);
//  2. render and run iptables-restore once with both tables;
//  3. on success mark the result applied; on failure Reset, so that the
//     next call is a full sync.
//
// The Result is returned even when the restore fails, for its payload.
func Sync(runner kernel.Runner, renderer *Renderer, snap *model.Snapshot) (*Result, error) {
	if renderer.NeedsFullSync() {
		existing, err := ensureJumps(runner, renderer.JumpRules())
		if err != nil {
			renderer.Reset()
			return nil, fmt.Errorf("sync: %w", err)
		}
		if nat, ok := existing[TableNAT]; ok {
			renderer.SetExistingChains(TableNAT, nat)
		} else if save, err := runner.Save(TableNAT); err == nil {
			renderer.SetExistingChains(TableNAT, iptsave.ChainNames(string(save)))
		}
	}
	res := renderer.Render(snap)
	if err := restore(runner, res); err != nil {
		renderer.Reset()
		return res, fmt.Errorf("sync of %d service ports (full=%v): %w", res.ServicePorts, res.FullSync, err)
	}
	renderer.Applied(res)
	return res, nil
}

// ensureJumps ensures the jump rules, together when runner can
// (kernel.JumpEnsurer: it also says which chains the tables hold), else
// one by one (no chains known).
func ensureJumps(runner kernel.Runner, rules []kernel.JumpRule) (kernel.TableChains, error) {
	if je, ok := runner.(kernel.JumpEnsurer); ok {
		return je.EnsureJumps(rules)
	}
	for _, jump := range rules {
		if err := runner.EnsureJump(jump); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// restore applies res through runner: streamed when runner is a
// kernel.StreamRestorer, else as one joined payload.
func restore(runner kernel.Runner, res *Result) error {
	if sr, ok := runner.(kernel.StreamRestorer); ok {
		return sr.RestoreStream(res)
	}
	return runner.Restore(res.Payload())
}
