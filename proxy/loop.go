package proxy

import (
	"context"
	"log/slog"
	"time"

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
}

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

func (l *Loop) syncOnce() Outcome {
	start := time.Now()
	objs, err := l.Source.List()
	if err != nil {
		l.Log.Error("listing services failed", "err", err)
		return Outcome{Duration: time.Since(start), Err: err}
	}
	snap := model.Build(objs.Services, objs.EndpointSlices, l.NodeName)
	stats, err := l.Backend.Sync(snap)
	out := Outcome{Generation: objs.Generation, Duration: time.Since(start), Stats: stats, Err: err}
	if err == nil {
		out.HealthChecks = healthChecks(snap)
	}
	if err != nil {
		l.Log.Error("sync failed; the previous rules stay in place and the next sync is a full one", "err", err, "retryIn", l.RetryPeriod)
		return out
	}
	l.Log.Info("synced", "mode", l.Backend.Mode(), "full", stats.Full, "servicePorts", stats.ServicePorts,
		"endpoints", stats.Endpoints, "bytes", stats.Bytes, "generation", objs.Generation, "took", out.Duration.Round(time.Microsecond))
	return out
}
