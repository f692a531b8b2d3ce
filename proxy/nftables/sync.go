package nftables

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/model"
)

// FullSyncPeriod is how often a sync is a full one even when nothing asks
// for it (upstream: proxyutil.FullSyncPeriod).
const FullSyncPeriod = time.Hour

// staleChainDelay is how long a flushed chain waits before it is deleted:
// with kernels before 6.2 a chain whose last map element was just deleted
// still counts as referenced for a short while.
const staleChainDelay = time.Second

// Syncer runs a Renderer's transactions against one knftables.Interface
// (the kernel, or knftables.Fake in tests) and keeps what upstream's
// proxier keeps between syncs: the stale chains to delete later and when
// the last full sync was.
type Syncer struct {
	NFT      knftables.Interface
	Renderer *Renderer
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	lastFull    time.Time
	staleChains map[string]time.Time
}

// Result describes one successful sync.
type Result struct {
	Plan
	// Operations is the number of commands in the transaction.
	Operations int
	// Bytes is the size of the transaction's text (what nft reads).
	Bytes int
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Sync makes the table match snap: it deletes chains that went stale at
// least a second ago, reads what the table holds, renders, and runs the
// transaction. After an error the next Sync is a full one.
func (s *Syncer) Sync(ctx context.Context, snap *model.Snapshot) (Result, error) {
	start := s.now()
	if s.staleChains == nil {
		s.staleChains = map[string]time.Time{}
	}
	full := s.Renderer.NeedsFull() || start.Sub(s.lastFull) > FullSyncPeriod
	if err := s.deleteStaleChains(ctx, start); err != nil {
		full = true // the chains come back as stale at the end of this sync
	}
	view := s.read(ctx, full)
	tx := s.NFT.NewTransaction()
	plan := s.Renderer.Render(tx, snap, view, full)
	if err := s.NFT.Run(ctx, tx); err != nil {
		s.Renderer.Failed()
		clear(s.staleChains) // not flushed after all; recomputed next time
		return Result{}, fmt.Errorf("nftables transaction (%s): %w", plan, err)
	}
	s.Renderer.Committed(snap)
	if plan.Full {
		s.lastFull = start
	}
	for _, c := range plan.ActiveChains {
		delete(s.staleChains, c)
	}
	for _, c := range plan.StaleChains {
		s.staleChains[c] = start
	}
	return Result{Plan: plan, Operations: tx.NumOperations(), Bytes: len(tx.String())}, nil
}

// deleteStaleChains deletes, in a transaction of its own, the chains
// flushed at least staleChainDelay before now.
func (s *Syncer) deleteStaleChains(ctx context.Context, now time.Time) error {
	tx := s.NFT.NewTransaction()
	for chain, since := range s.staleChains {
		if since.Before(now.Add(-staleChainDelay)) {
			tx.Delete(&knftables.Chain{Name: chain})
			delete(s.staleChains, chain)
		}
	}
	if tx.NumOperations() == 0 {
		return nil
	}
	return s.NFT.Run(ctx, tx)
}

// read lists the table's chains and sets, and on full syncs the elements
// of the fixed sets and maps.
func (s *Syncer) read(ctx context.Context, full bool) *View {
	view := &View{Elements: map[string][]*knftables.Element{}, Unreadable: map[string]bool{}}
	if all, err := s.NFT.ListAll(ctx); err == nil {
		view.Listed, view.Chains, view.Sets = true, all["chain"], all["set"]
	}
	if !full {
		return view
	}
	sets, maps := ContainerNames()
	for _, c := range []struct {
		kind  string
		names []string
	}{{"set", sets}, {"map", maps}} {
		for _, name := range c.names {
			elems, err := s.NFT.ListElements(ctx, c.kind, name)
			switch {
			case err == nil:
				view.Elements[name] = elems
			case !knftables.IsNotFound(err):
				view.Unreadable[name] = true
			}
		}
	}
	return view
}

// StaleChains are the chains waiting to be deleted (for tests and logs).
func (s *Syncer) StaleChains() int { return len(s.staleChains) }
