package netns

import (
	"context"
	"fmt"
	"reflect"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/workload"
)

// A change of a few hand-written EndpointSlices costs those slices, not
// the lab: a lab may hold 10,000 Services and their slices, and reading,
// journaling and rewriting them all made one slice's apply take seconds.
// No controller reads a hand-written slice (they derive the controller's
// slices from Services and pods, which such a change leaves alone), so
// the change needs only the small kinds (pods, workloads, namespaces,
// ConfigMaps) and the stored versions of its own slices; the journal
// records, and the store writes, a labstore.Delta of them. Whatever does
// not fit — pods to reap, a controller that would change anything but the
// slices — goes the whole way (update).

// slicesOnly reports whether m holds EndpointSlices and nothing else.
func slicesOnly(m *workload.Manifests) bool {
	return len(m.EndpointSlices) > 0 && len(m.Namespaces)+len(m.Pods)+len(m.Deployments)+len(m.ReplicaSets)+len(m.StatefulSets)+
		len(m.DaemonSets)+len(m.Services)+len(m.ConfigMaps) == 0
}

// applySlices applies manifests of EndpointSlices only (slicesOnly) as a
// change of those slices; handled is false when the change needs the
// whole lab (the caller then runs update).
func (l *Lab) applySlices(ctx context.Context, m *workload.Manifests, source string, opts Options) (handled bool, err error) {
	opts, err = opts.withDefaults()
	if err != nil {
		return true, err
	}
	times, step := opts.times(), time.Now()
	unlock, err := l.lock(ctx, opts)
	if err != nil {
		return true, err
	}
	defer unlock()
	times.Lock = since(&step)
	cur, err := l.readForSlices(m)
	if err != nil || l.hasFinished(cur) {
		return err != nil, err
	}
	times.Read = since(&step)
	next, err := l.Cluster().Apply(cur, m, source)
	if err != nil {
		return true, err
	}
	delta, undo, ok := sliceDelta(cur, next)
	if !ok {
		return false, nil
	}
	times.Change = since(&step)
	return true, l.commitDelta(ctx, opts, labstore.OpApply, cur, next, delta, undo)
}

// readForSlices is the part of the lab a change of m's slices reads: the
// small kinds, and the stored slices of m's names.
func (l *Lab) readForSlices(m *workload.Manifests) (*labstore.State, error) {
	cur, _, err := l.Store.ReadObjectsButServices()
	if err != nil {
		return nil, err
	}
	seen := map[[2]string]bool{}
	for _, s := range m.EndpointSlices {
		key := [2]string{sliceNamespace(s), s.Name}
		if seen[key] {
			continue
		}
		seen[key] = true
		old, err := l.Store.ReadEndpointSlice(key[0], key[1])
		if err != nil {
			return nil, err
		}
		if old != nil {
			cur.EndpointSlices = append(cur.EndpointSlices, old)
		}
	}
	return cur, nil
}

// sliceNamespace is a manifest slice's namespace, defaulted as apply does.
func sliceNamespace(s *discoveryv1.EndpointSlice) string {
	if s.Namespace == "" {
		return "default"
	}
	return s.Namespace
}

// hasFinished reports whether a terminating pod of st is done: the change
// must reap it first, which is update's work.
func (l *Lab) hasFinished(st *labstore.State) bool {
	for _, p := range workload.Terminating(st) {
		if l.terminated(p) {
			return true
		}
	}
	return false
}

// sliceDelta is what goes from cur to next, both holding the small kinds
// and the changed slices only: the slices to write (and, to undo it, the
// old ones to write back and the new ones to remove). ok is false when
// next differs from cur in anything but hand-written slices.
func sliceDelta(cur, next *labstore.State) (delta, undo *labstore.Delta, ok bool) {
	if !sameButSlices(cur, next) {
		return nil, nil, false
	}
	old := map[[2]string]*discoveryv1.EndpointSlice{}
	for _, s := range cur.EndpointSlices {
		old[[2]string{s.Namespace, s.Name}] = s
	}
	delta, undo = &labstore.Delta{Write: &labstore.State{}}, &labstore.Delta{Write: &labstore.State{}, Remove: &labstore.State{}}
	for _, s := range next.EndpointSlices {
		if s.Labels[discoveryv1.LabelManagedBy] == "endpointslice-controller.k8s.io" {
			return nil, nil, false // a controller's slice: a change of Services or pods
		}
		prev, had := old[[2]string{s.Namespace, s.Name}]
		delete(old, [2]string{s.Namespace, s.Name})
		if had && reflect.DeepEqual(prev, s) {
			continue
		}
		delta.Write.EndpointSlices = append(delta.Write.EndpointSlices, s)
		if had {
			undo.Write.EndpointSlices = append(undo.Write.EndpointSlices, prev)
		} else {
			undo.Remove.EndpointSlices = append(undo.Remove.EndpointSlices, s)
		}
	}
	if len(old) > 0 {
		return nil, nil, false // a slice went: not an apply of slices
	}
	return delta, undo, true
}

// sameButSlices reports whether a and b hold the same objects of every
// kind but EndpointSlices.
func sameButSlices(a, b *labstore.State) bool {
	x, y := *a, *b
	x.EndpointSlices, y.EndpointSlices = nil, nil
	return reflect.DeepEqual(x, y)
}

// commitDelta is commit for a change of a few objects: the journal's
// commit records delta, the store writes it, the proxies acknowledge it.
// No pod is made or removed. A failed write writes undo back; an
// interruption once it is stored leaves the journal's commit to the next
// command, as commit does.
func (l *Lab) commitDelta(ctx context.Context, opts Options, op string, cur, next *labstore.State, delta, undo *labstore.Delta) error {
	times, step := opts.times(), time.Now()
	if ctx.Err() != nil {
		return fmt.Errorf("lab %s: %s interrupted: %w", l.Name(), op, ctx.Err())
	}
	if err := l.Store.WriteIntent(&labstore.Intent{Op: op, Phase: labstore.PhaseCommit, Delta: delta}); err != nil {
		return err
	}
	crashPoint("update:commit")
	times.Journal = since(&step)
	gen, err := l.Store.WriteDelta(delta)
	if err != nil {
		return l.rollBackDelta(ctx, op, undo, err, opts)
	}
	crashPoint("update:objects")
	times.Store = since(&step)
	times.Stored = step
	syncErr := l.waitForProxies(ctx, gen, opts)
	times.Proxies = since(&step)
	if ctx.Err() != nil {
		cause := syncErr
		if cause == nil {
			cause = fmt.Errorf("lab %s: %s interrupted: %w", l.Name(), op, ctx.Err())
		}
		return committedButInterrupted(cause, cur, next, nil)
	}
	reportCreated(opts.Out, cur, next)
	reportDeleted(opts.Out, cur, next)
	l.signalTerminating(cur, next, opts.Out)
	if err := l.Store.ClearIntent(); err != nil {
		return err
	}
	times.Finish = since(&step)
	return syncErr
}

// rollBackDelta undoes a delta whose write failed: the journal says so
// first, then undo is written and the proxies follow it.
func (l *Lab) rollBackDelta(ctx context.Context, op string, undo *labstore.Delta, cause error, opts Options) error {
	if err := l.Store.WriteIntent(&labstore.Intent{Op: op, Phase: labstore.PhaseCommit, Delta: undo}); err != nil {
		return fmt.Errorf("%w (and rolling back failed: %v; the next command on the lab retries)", cause, err)
	}
	gen, err := l.Store.WriteDelta(undo)
	if err != nil {
		return fmt.Errorf("%w (and rolling back failed: %v; the next command on the lab retries)", cause, err)
	}
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.Timeout)
	l.waitForProxies(wait, gen, opts) //nolint:errcheck // best effort: the error that matters is cause
	cancel()
	if err := l.Store.ClearIntent(); err != nil {
		return fmt.Errorf("%w (and rolling back failed: %v; the next command on the lab retries)", cause, err)
	}
	return fmt.Errorf("%w; rolled back", cause)
}

// finishDelta is finishCommitted for a journal's delta (commitDelta): the
// delta stored, the proxies' acknowledgements awaited. It clears in.Delta,
// which is stored then. No pod changes in a delta: nothing to signal.
func (l *Lab) finishDelta(ctx context.Context, in *labstore.Intent, opts Options) error {
	gen, err := l.Store.WriteDelta(in.Delta)
	if err != nil {
		return err
	}
	if err := l.waitForProxies(ctx, gen, opts); err != nil {
		fmt.Fprintf(opts.Out, "warning: %v\n", err)
	}
	in.Delta = nil
	return nil
}
