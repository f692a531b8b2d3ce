package netns

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/hostprog"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/workload"
)

// Apply applies a manifest file to the lab, like `kubectl apply -f`: it
// creates or replaces the objects, brings up new pods (their namespace,
// their link to the node, their server on every containerPort), removes
// pods that are gone, and waits until every node's proxy has the result in
// its rules. A manifest that does not validate changes nothing.
func (l *Lab) Apply(ctx context.Context, manifestFile string, opts Options) error {
	data, err := workload.ReadFile(manifestFile)
	if err != nil {
		return err
	}
	m, err := workload.Decode(data, manifestFile)
	if err != nil {
		return err
	}
	return l.ApplyManifests(ctx, m, manifestFile, opts)
}

// ApplyManifests is Apply for manifests already decoded, source naming
// them in errors: the same controllers, transaction and wait. svclab bench
// dataplane applies its thousands of generated Services this way, decoded
// in parts (workload.Manifests.Append), in one change the proxies see at
// once.
func (l *Lab) ApplyManifests(ctx context.Context, m *workload.Manifests, source string, opts Options) error {
	if err := hostprog.Ensure(ctx, opts.Out, hostprog.Needs(hostprog.Lab)...); err != nil {
		return err
	}
	if slicesOnly(m) { // a change of a few slices costs those (applyslices.go)
		if handled, err := l.applySlices(ctx, m, source, opts); handled {
			return err
		}
	}
	return l.update(ctx, opts, labstore.OpApply, func(cur *labstore.State) (*labstore.State, error) {
		return l.Cluster().Apply(cur, m, source)
	})
}

// update runs one change of the lab's objects under the lab's lock and makes
// the kernel follow it, as a transaction the lab's journal can finish or
// undo (txn.go): the new pods are recorded, then made; the commit records
// the objects and the pods that are gone, then stores the objects; the gone
// pods are removed last. A failure or an interruption (ctx) before the
// objects are stored undoes the change: the new pods go and the store holds
// what it held before. Once they are stored the change stands, as a write
// the API server accepted: an interruption while the proxies catch up
// leaves it to the next command to finish (committedButInterrupted).
func (l *Lab) update(ctx context.Context, opts Options, op string, change func(*labstore.State) (*labstore.State, error)) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	times, step := opts.times(), time.Now()
	unlock, err := l.lock(ctx, opts)
	if err != nil {
		return err
	}
	defer unlock()
	times.Lock = since(&step)
	cur, _, err := l.Store.ReadObjects()
	if err != nil {
		return err
	}
	// Pods that finished terminating go first, in a change of their own
	// (terminating.go): a StatefulSet's successor takes the same name.
	if cur, err = l.reapFinished(ctx, cur, opts); err != nil {
		return err
	}
	times.Read = since(&step)
	next, err := change(cur)
	if err != nil {
		return err
	}
	times.Change = since(&step)
	return l.commit(ctx, opts, op, cur, next)
}

// commit makes the kernel and the store go from cur to next under the
// lab's lock, as the transaction update describes.
func (l *Lab) commit(ctx context.Context, opts Options, op string, cur, next *labstore.State) error {
	times, step := opts.times(), time.Now()
	var made, gone []*corev1.Pod
	for _, pod := range next.Pods {
		if cur.Pod(pod.Name) == nil { // pods keep their name, node and IP for life
			made = append(made, pod)
		}
	}
	for _, old := range cur.Pods {
		if next.Pod(old.Name) == nil {
			gone = append(gone, old)
		}
	}
	// The journal names the new pods before any of them exists.
	if err := l.Store.WriteIntent(&labstore.Intent{Op: op, Phase: labstore.PhasePrepare, Pods: made}); err != nil {
		return err
	}
	crashPoint("update:intent")
	// New pods first, so that a Service's new endpoints answer before the
	// proxies send traffic to them; they start side by side (startPods),
	// each reported as it comes up, and a pod that fails to start undoes
	// them all: nothing of the change is stored.
	err := l.startPods(ctx, made, opts, func(pod *corev1.Pod) {
		fmt.Fprintf(opts.Out, "pod/%s created on %s with IP %s\n", pod.Name, pod.Spec.NodeName, pod.Status.PodIP)
	})
	if ctx.Err() != nil {
		err = fmt.Errorf("lab %s: %s interrupted: %w", l.Name(), op, ctx.Err())
	}
	if err != nil {
		return l.rollBack(ctx, op, cur, made, false, err, opts)
	}
	var goneNames []string
	for _, p := range gone {
		goneNames = append(goneNames, p.Name)
	}
	// An interruption before the commit rolls back, whether or not a pod
	// was started (a change may start none: delete pod, a Service alone).
	if ctx.Err() != nil {
		return l.rollBack(ctx, op, cur, made, false, fmt.Errorf("lab %s: %s interrupted: %w", l.Name(), op, ctx.Err()), opts)
	}
	// The commit: from here the next command finishes the change.
	if err := l.Store.WriteIntent(&labstore.Intent{Op: op, Phase: labstore.PhaseCommit, Pods: made, Objects: next, Stop: goneNames}); err != nil {
		return l.rollBack(ctx, op, cur, made, false, err, opts)
	}
	crashPoint("update:commit")
	times.Journal += since(&step)
	gen, err := l.Store.WriteObjects(next)
	if err != nil {
		return l.rollBack(ctx, op, cur, made, true, err, opts)
	}
	crashPoint("update:objects")
	times.Store = since(&step)
	times.Stored = step
	syncErr := l.waitForProxies(ctx, gen, opts)
	times.Proxies = since(&step)
	if ctx.Err() != nil {
		// Stored is accepted, as an API server's write is: an
		// interruption now leaves the journal's commit for the next
		// command, exactly as a kill here would.
		cause := syncErr
		if cause == nil { // every proxy acknowledged just as the interrupt came
			cause = fmt.Errorf("lab %s: %s interrupted: %w", l.Name(), op, ctx.Err())
		}
		return committedButInterrupted(cause, cur, next, goneNames)
	}
	reportCreated(opts.Out, cur, next)
	reportDeleted(opts.Out, cur, next)
	l.reportServicesCreated(opts.Out, cur, next)
	// Deleted pods get SIGTERM once the proxies show them terminating.
	l.signalTerminating(cur, next, opts.Out)
	// Gone pods last: the proxies have stopped sending them new traffic.
	for _, old := range gone {
		if err := l.stopPod(old.Name); err != nil {
			return err // the journal still says commit: the next command retries
		}
		crashPoint("update:pod-stopped")
		fmt.Fprintf(opts.Out, "pod/%s deleted\n", old.Name)
	}
	if err := l.Store.ClearIntent(); err != nil {
		return err
	}
	times.Finish = since(&step)
	return syncErr
}

func mustAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}
