package proxy

import (
	"context"
	"errors"
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
	// HealthChecks are the health check node ports the primary family's
	// synced snapshot asks for (nil when a family's sync failed); each
	// family's are in Families.
	HealthChecks map[int32]server.ServiceHealthCheck
	// Families are the outcomes of each IP family's sync, primary first;
	// Stats is their sum and Err their errors joined.
	Families []FamilyOutcome
}

// FamilyOutcome is one IP family's part of a sync.
type FamilyOutcome struct {
	Family   corev1.IPFamily
	Duration time.Duration
	Stats    SyncStats
	Err      error
	// HealthChecks are the health check node ports the family's snapshot
	// asks for, with its local endpoints of this family (upstream runs a
	// service health server per family); nil when the sync failed.
	HealthChecks map[int32]server.ServiceHealthCheck
}

// FamilyBackend is the Backend of one IP family.
type FamilyBackend struct {
	Family  corev1.IPFamily
	Backend Backend
}

// Loop is the proxy's sync loop. Like upstream's metaproxier it runs one
// tracker and one backend per IP family the proxy serves: Backend for the
// primary family (Family), and Secondary for the other one on a
// dual-stack node. Every change goes to both trackers; every sync syncs
// both, primary first, each on its own (one family's failure does not
// stop the other's sync).
type Loop struct {
	Source  sources.Source
	Backend Backend
	// Family is Backend's IP family; empty means IPv4.
	Family corev1.IPFamily
	// Secondary is the other family's backend (nil: single-stack).
	Secondary     *FamilyBackend
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
	// process shares the host's conntrack table. It is called once per
	// family, with that family's snapshot.
	CleanConntrack func(*model.Snapshot) (int, error)

	// proxiers are the families' trackers and backends, primary first;
	// listed is false until the trackers hold a full List (and again
	// after a lost change).
	proxiers []*familyProxier
	listed   bool
	lastFull time.Time
}

// familyProxier is one IP family's part of the loop.
type familyProxier struct {
	family  corev1.IPFamily
	backend Backend
	// tracker holds the objects and the model of this family built from
	// them.
	tracker *model.Tracker
	// forceFull makes the next sync rewrite every rule (the canary went
	// missing), from the tracker as it is, as upstream's
	// forceSyncProxyRules does.
	forceFull bool
	// cleaned is the stale-UDP filter of the last successful conntrack
	// cleanup (nil: none yet, or a sync or cleanup failed since).
	cleaned *staleUDPFilter
}

// newProxiers makes the families' trackers.
func (l *Loop) newProxiers() []*familyProxier {
	primary := l.Family
	if primary == "" {
		primary = corev1.IPv4Protocol
	}
	out := []*familyProxier{{family: primary, backend: l.Backend, tracker: model.NewTracker(primary, l.NodeName)}}
	if l.Secondary != nil {
		f := l.Secondary.Family
		out = append(out, &familyProxier{family: f, backend: l.Secondary.Backend, tracker: model.NewTracker(f, l.NodeName)})
	}
	return out
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
	l.proxiers = l.newProxiers()
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

// checkCanary forces a full sync of each family whose backend's canary
// is gone (upstream's iptables Monitor, checked on every SyncPeriod tick).
func (l *Loop) checkCanary() {
	for _, p := range l.proxiers {
		c, ok := p.backend.(Canaried)
		if !ok {
			continue
		}
		missing, err := c.CanaryMissing()
		if err != nil {
			l.Log.Error("checking the canary failed", "err", err, "ipFamily", p.family)
			continue
		}
		if missing {
			l.Log.Info("the canary chain is gone (someone flushed the rules): full resync", "ipFamily", p.family)
			p.forceFull = true
		}
	}
}

// syncOnce is one sync:
//
//  1. bring the trackers up to date: a full List on the first sync, every
//     FullSyncPeriod (svclab's safety net; upstream relies on its
//     informers) and when the source lost changes; otherwise only the
//     changes the source saw;
//  2. sync each family (syncFamily), primary first;
//  3. report the sum: the stats added up, the errors joined.
func (l *Loop) syncOnce() Outcome {
	start := time.Now()
	relist := time.Since(l.lastFull) >= l.FullSyncPeriod
	gen, err := l.updateTracker(relist)
	if err != nil {
		l.Log.Error("reading services failed", "err", err)
		return Outcome{Duration: time.Since(start), Err: err}
	}
	out := Outcome{Generation: gen}
	var errs []error
	for _, p := range l.proxiers {
		fo := l.syncFamily(p, relist)
		out.Families = append(out.Families, fo)
		out.Stats = out.Stats.add(fo.Stats)
		errs = append(errs, fo.Err)
	}
	out.Duration, out.Err = time.Since(start), errors.Join(errs...)
	if out.Err != nil {
		return out
	}
	out.HealthChecks = out.Families[0].HealthChecks
	if relist {
		l.lastFull = start
	}
	l.Log.Info("synced", "mode", l.Backend.Mode(), "full", out.Stats.Full, "servicePorts", out.Stats.ServicePorts,
		"endpoints", out.Stats.Endpoints, "bytes", out.Stats.Bytes, "generation", gen, "took", out.Duration.Round(time.Microsecond))
	return out
}

// syncFamily is one family's sync:
//
//  1. take the snapshot (only changed services rebuilt);
//  2. every FullSyncPeriod and when the canary went missing, tell the
//     backend to rewrite every rule; sync;
//  3. delete the conntrack entries of stale UDP flows (CleanConntrack),
//     before the outcome is reported, so a reported sync has them gone.
func (l *Loop) syncFamily(p *familyProxier, relist bool) FamilyOutcome {
	start := time.Now()
	full := relist || p.forceFull
	snap := p.tracker.Snapshot()
	if fs, ok := p.backend.(FullSyncer); ok && full {
		fs.ForceFullSync()
	}
	stats, err := p.backend.Sync(snap)
	out := FamilyOutcome{Family: p.family, Duration: time.Since(start), Stats: stats, Err: err}
	if err != nil {
		l.Log.Error("sync failed; the previous rules stay in place and the next sync is a full one", "err", err, "ipFamily", p.family, "retryIn", l.RetryPeriod)
		p.cleaned = nil
		return out
	}
	p.forceFull = false
	l.cleanConntrack(p, snap, full)
	out.Duration, out.HealthChecks = time.Since(start), healthChecks(snap)
	return out
}

// add is the sum of two families' stats (Full when either was).
func (s SyncStats) add(o SyncStats) SyncStats {
	return SyncStats{Full: s.Full || o.Full, ServicePorts: s.ServicePorts + o.ServicePorts,
		Endpoints: s.Endpoints + o.Endpoints, Bytes: s.Bytes + o.Bytes}
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
			for _, p := range l.proxiers {
				applyChanges(p.tracker, ch)
			}
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
	for _, p := range l.proxiers {
		p.tracker.Replace(objs.Services, objs.EndpointSlices)
	}
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

// cleanConntrack deletes the stale UDP flows of snap, one family's
// snapshot (staleudp.go). A failure is logged, as upstream logs it, and
// does not fail the sync: the rules are in place, and the next sync tries
// again.
//
// Upstream reads the whole conntrack table after every sync. Here a
// partial sync whose UDP service addresses and serving endpoints are those
// of the last successful cleanup reads nothing: every UDP flow in the
// table was either judged by that same filter then, or made since by rules
// that send only to those serving endpoints, so none can be stale (at
// 10,000 Services the dump was 9% of the CPU a one-endpoint nftables sync
// took, nft included, by perf of a lab's proxy).
// Full syncs (the first, the hourly one, the one after the canary went
// missing, whose rules may have been gone while flows were made) and the
// sync after a failure always clean.
func (l *Loop) cleanConntrack(p *familyProxier, snap *model.Snapshot, full bool) {
	if l.CleanConntrack == nil {
		return
	}
	filter := newStaleUDPFilter(snap)
	if !full && p.cleaned != nil && p.cleaned.equal(filter) {
		return
	}
	n, err := l.CleanConntrack(snap)
	if err != nil {
		p.cleaned = nil
		l.Log.Error("deleting stale UDP conntrack entries failed", "err", err, "deleted", n, "ipFamily", snap.Family)
		return
	}
	p.cleaned = filter
	if n > 0 {
		l.Log.Info("deleted stale UDP conntrack entries", "entries", n, "ipFamily", snap.Family)
	}
}
