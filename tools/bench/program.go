package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/bench/report"
)

// programServices applies n Services and times it: to the objects in the
// store, and to the last Service's rule in the kernel; and the proxy's CPU
// time meanwhile, up to the end of the apply (which waits until the proxy
// reports the generation programmed).
func programServices(ctx context.Context, lab *netns.Lab, n int, last probe, opts netns.Options) (*report.Programming, *report.CPU, error) {
	m, err := decodeServices(n)
	if err != nil {
		return nil, nil, err
	}
	pid := lab.ProxyPID(nodeName)
	if pid == 0 {
		return nil, nil, fmt.Errorf("lab %s: the proxy on %s is not running", lab.Name(), nodeName)
	}
	cpu0, err := readCPU(pid)
	if err != nil {
		return nil, nil, err
	}
	gen0, err := lab.Store.Generation()
	if err != nil {
		return nil, nil, err
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watched := make(chan watchResult, 1)
	go func() { watched <- watchKernel(watchCtx, lab, gen0, last) }()
	start := time.Now()
	if err := lab.ApplyManifests(ctx, m, "generated Services", opts); err != nil {
		return nil, nil, err
	}
	cpu1, err := readCPU(pid)
	if err != nil {
		return nil, nil, fmt.Errorf("the proxy on %s (pid %d) during the apply: %w", nodeName, pid, err)
	}
	if lab.ProxyPID(nodeName) != pid {
		return nil, nil, fmt.Errorf("the proxy on %s restarted during the apply", nodeName)
	}
	var w watchResult
	select {
	case w = <-watched:
	case <-time.After(probeGrace):
		return nil, nil, fmt.Errorf("the proxy on %s reports the Services programmed, but %s has not shown the last one's rule %s later",
			nodeName, strings.Join(last.command(), " "), probeGrace)
	}
	if w.err != nil {
		return nil, nil, fmt.Errorf("probe %s: %w", strings.Join(last.command(), " "), w.err)
	}
	cpu := cpu1.since(cpu0)
	rule, timedBy, resolution := w.rule, "probe", w.resolution
	if synced, ok := proxySynced(lab, w.store); ok && synced.Before(rule) {
		rule, timedBy, resolution = synced, "proxy", 0
	}
	return &report.Programming{
		TotalMs: ms(rule.Sub(start)), StoreMs: ms(w.store.Sub(start)), ProxyMs: ms(rule.Sub(w.store)),
		ResolutionMs: ms(resolution), TimedBy: timedBy, RuleFound: true, Probe: strings.Join(last.command(), " "),
	}, &cpu, nil
}

// proxySynced is when the node's proxy last finished a sync, as it
// reported it (labstore.ProxyStatus.LastSync: after its kernel update
// returned), when that was a healthy sync after the objects were stored.
// The probe confirms the rule; this time is sharper than the probe's
// polling, which an exec in the lab's namespace makes coarse on a busy
// machine.
func proxySynced(lab *netns.Lab, stored time.Time) (time.Time, bool) {
	statuses, err := lab.Store.ProxyStatuses()
	if err != nil {
		return time.Time{}, false
	}
	st, ok := statuses[nodeName]
	if !ok || !st.Healthy || !st.LastSync.After(stored) {
		return time.Time{}, false
	}
	return st.LastSync, true
}

// probeGrace bounds how long after the apply (which waits for the proxy
// to report the generation programmed) the probe may take to see the rule.
const probeGrace = 30 * time.Second

type watchResult struct {
	store, rule time.Time
	resolution  time.Duration
	err         error
}

// watchKernel waits for the store's generation to pass gen0, then for the
// probe to find the rule.
func watchKernel(ctx context.Context, lab *netns.Lab, gen0 int64, p probe) watchResult {
	var w watchResult
	for {
		gen, err := lab.Store.Generation()
		if err != nil {
			return watchResult{err: err}
		}
		if gen > gen0 {
			w.store = time.Now()
			break
		}
		select {
		case <-ctx.Done():
			return watchResult{err: ctx.Err()}
		case <-time.After(5 * time.Millisecond):
		}
	}
	w.rule, w.resolution, w.err = p.waitFound(ctx)
	return w
}
