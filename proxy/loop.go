package proxy

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/server"
	"github.com/svclab/svclab/proxy/sources"
)

// Outcome is one sync attempt, reported to whoever watches the proxy
// (metrics, health, the lab's status file).
type Outcome struct {
	Generation int64
	Duration   time.Duration
	Stats      SyncStats
	Err        error
	// HealthChecks are the health check node ports the synced snapshot
	// asks for (nil when the sync failed).
	HealthChecks map[int32]server.ServiceHealthCheck
}

// Loop is the proxy's sync loop.
type Loop struct {
	Source        sources.Source
	Backend       Backend
	NodeName      string
	MinSyncPeriod time.Duration
	SyncPeriod    time.Duration
	// RetryPeriod is how long to wait after a failed sync (default 1s).
	RetryPeriod time.Duration
	Log         *slog.Logger
	// Report is called after every sync attempt (may be nil).
	Report func(Outcome)
	// Changed is called when the source reported a change that is not yet
	// synced (upstream's "queued update" for the health server; may be nil).
	Changed func()
	// FullSyncPeriod is how often a sync lists every object again and
	// rewrites every rule even when nothing asked for it (default
	// DefaultFullSyncPeriod). Upstream: proxyutil.FullSyncPeriod.
	FullSyncPeriod time.Duration
	// CleanConntrack, if set, runs after every successful sync with its
	// snapshot and returns how many conntrack entries it deleted:
	// CleanStaleUDPFlows in a proxy (staleudp.go); nil in tests whose
	// process shares the host's conntrack table.
	CleanConntrack func(*model.Snapshot) (int, error)

	// tracker holds the objects and the model built from them; listed is
	// false until it holds a full List (and again after a lost change).
	tracker  *model.Tracker
	listed   bool
	lastFull time.Time
	// forceFull makes the next sync rewrite every rule (the canary went
	// missing), from the tracker as it is, as upstream's
	// forceSyncProxyRules does.
	forceFull bool
}

// DefaultFullSyncPeriod is upstream's proxyutil.FullSyncPeriod: one hour.
const DefaultFullSyncPeriod = time.Hour

// Run syncs until ctx ends. The first sync happens as soon as the source is
// ready; later ones after changes (coalesced, at least MinSyncPeriod apart),
// every SyncPeriod, and RetryPeriod after a failure.
func (l *Loop) Run(ctx context.Context) error {
	if l.RetryPeriod == 0 {
		l.RetryPeriod = time.Second
	}
	if l.Log == nil {
		l.Log = slog.Default()
	}
	if l.FullSyncPeriod == 0 {
		l.FullSyncPeriod = DefaultFullSyncPeriod
	}
	l.tracker = model.NewTracker(corev1.IPv4Protocol, l.NodeName)
	kick := make(chan struct{}, 1)
	notify := func() {
		if l.Changed != nil {
			l.Changed()
		}
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	if err := l.Source.Run(ctx, notify); err != nil {
		return err
	}
	var lastSync time.Time
	periodic := time.NewTimer(0) // the first sync: now
	defer periodic.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		case <-periodic.C:
			l.checkCanary()
		}
		if wait := l.MinSyncPeriod - time.Since(lastSync); wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			select { // changes that came while we waited are in this sync
			case <-kick:
			default:
			}
		}
		lastSync = time.Now()
		out := l.syncOnce()
		if l.Report != nil {
			l.Report(out)
		}
		next := l.SyncPeriod
		if out.Err != nil {
			next = l.RetryPeriod
		}
		if !periodic.Stop() {
			select {
			case <-periodic.C:
			default:
			}
		}
		periodic.Reset(next)
	}
}

// checkCanary forces a full sync when the backend's canary is gone
// (upstream's iptables Monitor, checked on every SyncPeriod tick).
func (l *Loop) checkCanary() {
	c, ok := l.Backend.(Canaried)
	if !ok {
		return
	}
	missing, err := c.CanaryMissing()
	if err != nil {
		l.Log.Error("checking the canary failed", "err", err)
		return
	}
	if missing {
		l.Log.Info("the canary chain is gone (someone flushed the rules): full resync")
		l.forceFull = true
	}
}

// syncOnce is one sync:
//
//  1. bring the tracker up to date: a full List on the first sync, every
//     FullSyncPeriod (svclab's safety net; upstream relies on its
//     informers) and when the source lost changes; otherwise only the
//     changes the source saw;
//  2. take the snapshot (only changed services rebuilt);
//  3. every FullSyncPeriod and when the canary went missing, tell the
//     backend to rewrite every rule; sync;
//  4. delete the conntrack entries of stale UDP flows (CleanConntrack),
//     before the outcome is reported, so a reported sync has them gone.
func (l *Loop) syncOnce() Outcome {
	start := time.Now()
	relist := time.Since(l.lastFull) >= l.FullSyncPeriod
	full := relist || l.forceFull
	gen, err := l.updateTracker(relist)
	if err != nil {
		l.Log.Error("reading services failed", "err", err)
		return Outcome{Duration: time.Since(start), Err: err}
	}
	snap := l.tracker.Snapshot()
	if fs, ok := l.Backend.(FullSyncer); ok && full {
		fs.ForceFullSync()
	}
	stats, err := l.Backend.Sync(snap)
	out := Outcome{Generation: gen, Duration: time.Since(start), Stats: stats, Err: err}
	if err != nil {
		l.Log.Error("sync failed; the previous rules stay in place and the next sync is a full one", "err", err, "retryIn", l.RetryPeriod)
		return out
	}
	if full {
		l.forceFull = false
	}
	if relist {
		l.lastFull = start
	}
	l.cleanConntrack(snap)
	out.HealthChecks = healthChecks(snap)
	l.Log.Info("synced", "mode", l.Backend.Mode(), "full", stats.Full, "servicePorts", stats.ServicePorts,
		"endpoints", stats.Endpoints, "bytes", stats.Bytes, "generation", gen, "took", out.Duration.Round(time.Microsecond))
	return out
}

// updateTracker feeds the tracker what changed, or everything (full, the
// first time, or when the source lost changes), and returns the generation.
func (l *Loop) updateTracker(full bool) (int64, error) {
	tracking, incremental := l.Source.(sources.Tracking)
	if incremental && l.listed && !full {
		ch, err := tracking.Changes()
		if err != nil {
			return 0, err
		}
		if !ch.Lost {
			applyChanges(l.tracker, ch)
			return ch.Generation, nil
		}
		l.Log.Info("the source lost changes: listing everything")
	}
	if incremental {
		// Changes seen before the List are in it; their objects carry
		// the latest state, so seeing them again later does no harm.
		if _, err := tracking.Changes(); err != nil {
			return 0, err
		}
	}
	objs, err := l.Source.List()
	if err != nil {
		l.listed = false
		return 0, err
	}
	l.tracker.Replace(objs.Services, objs.EndpointSlices)
	l.listed = true
	return objs.Generation, nil
}

// applyChanges records a source's changes in the tracker.
func applyChanges(t *model.Tracker, ch *sources.Changes) {
	for k, svc := range ch.Services {
		if svc == nil {
			t.DeleteService(k.Namespace, k.Name)
		} else {
			t.SetService(svc)
		}
	}
	for k, s := range ch.EndpointSlices {
		if s == nil {
			t.DeleteEndpointSlice(k.Namespace, k.Name)
		} else {
			t.SetEndpointSlice(s)
		}
	}
}

// cleanConntrack deletes the stale UDP flows of snap (staleudp.go). A
// failure is logged, as upstream logs it, and does not fail the sync: the
// rules are in place, and the next sync tries again.
func (l *Loop) cleanConntrack(snap *model.Snapshot) {
	if l.CleanConntrack == nil {
		return
	}
	n, err := l.CleanConntrack(snap)
	if err != nil {
		l.Log.Error("deleting stale UDP conntrack entries failed", "err", err, "deleted", n)
		return
	}
	if n > 0 {
		l.Log.Info("deleted stale UDP conntrack entries", "entries", n)
	}
}
