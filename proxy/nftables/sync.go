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
//
// It reads the kernel only for full syncs (the first, every
// FullSyncPeriod, after an error, or when asked by ForceFull): a partial
// sync renders against what the Renderer committed last, and a sync with
// nothing to change and no stale chain due runs no nft at all.
type Syncer struct {
	NFT      knftables.Interface
	Renderer *Renderer
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	lastFull    time.Time
	forceFull   bool
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

// ForceFull makes the next Sync a full one: it reads the kernel and
// rewrites every chain.
func (s *Syncer) ForceFull() { s.forceFull = true }

// Sync makes the table match snap: it deletes chains that went stale at
// least a second ago, reads what the table holds (full syncs only),
// renders, and runs the transaction unless it is empty. After an error
// the next Sync is a full one.
func (s *Syncer) Sync(ctx context.Context, snap *model.Snapshot) (Result, error) {
	start := s.now()
	if s.staleChains == nil {
		s.staleChains = map[string]time.Time{}
	}
	full := s.forceFull || s.Renderer.NeedsFull() || start.Sub(s.lastFull) > FullSyncPeriod
	if err := s.deleteStaleChains(ctx, start); err != nil {
		full = true // the chains come back as stale at the end of this sync
	}
	view := s.read(ctx, full)
	tx := s.NFT.NewTransaction()
	plan := s.Renderer.Render(tx, snap, view, full)
	if tx.NumOperations() > 0 {
		if err := s.NFT.Run(ctx, tx); err != nil {
			s.Renderer.Failed()
			clear(s.staleChains) // not flushed after all; recomputed next time
			return Result{}, fmt.Errorf("nftables transaction (%s): %w", plan, err)
		}
	}
	s.Renderer.Committed(snap)
	if plan.Full {
		s.lastFull, s.forceFull = start, false
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
// flushed at least staleChainDelay before now. On an error the chains may
// or may not be gone: the caller reads the kernel again.
func (s *Syncer) deleteStaleChains(ctx context.Context, now time.Time) error {
	var due []string
	for chain, since := range s.staleChains {
		if since.Before(now.Add(-staleChainDelay)) {
			due = append(due, chain)
			delete(s.staleChains, chain)
		}
	}
	if len(due) == 0 {
		return nil
	}
	tx := s.NFT.NewTransaction()
	for _, chain := range due {
		tx.Delete(&knftables.Chain{Name: chain})
	}
	return s.NFT.Run(ctx, tx)
}

// read lists, for a full sync, the table's chains and sets and the
// elements of the fixed sets and maps. A partial sync reads nothing (nil):
// the renderer works from what it committed.
func (s *Syncer) read(ctx context.Context, full bool) *View {
	if !full {
		return nil
	}
	view := &View{Elements: map[string][]*knftables.Element{}, Unreadable: map[string]bool{}}
	// A table not there (yet) holds nothing: that is known too.
	switch all, err := s.NFT.ListAll(ctx); {
	case err == nil:
		view.Listed, view.Chains, view.Sets = true, all["chain"], all["set"]
	case knftables.IsNotFound(err):
		view.Listed = true
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
