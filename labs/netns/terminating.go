package netns

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/workload"
)

// A deleted pod terminates as a kubelet terminates it. The delete stores
// the pod with its deletionTimestamp (now + grace period), so its
// endpoints turn terminating (ready=false, serving=true, terminating=true)
// and the proxies keep it only as a fallback; once the proxies have that,
// the pod's server is told (its node's kubelet syncs the pod's spec, now
// with the deadline; a DNS pod's supervisor gets SIGTERM and passes it on),
// and may go on answering (netexec --delay-shutdown) until it stops or the
// deadline comes, when it is closed outright (SIGKILL). The first
// command on the lab that finds the server gone, or the deadline passed,
// removes the pod (Reap): from the store, then its namespace.
//
// The terminating pods in the store are the journal of this: a delete
// interrupted while it waits (Ctrl-C, --wait=false, kill -9 of svclab)
// leaves them terminating, and the next command finishes them — it sends
// the SIGTERM a killed delete may not have sent, and reaps what is done.

// DeleteOptions are kubectl delete's flags.
type DeleteOptions struct {
	// GracePeriod is --grace-period (negative: each pod's own
	// terminationGracePeriodSeconds, default 30).
	GracePeriod int64
	// NoWait is --wait=false: return once the pods are terminating.
	NoWait bool
	// IgnoreNotFound is --ignore-not-found.
	IgnoreNotFound bool
}

func (d DeleteOptions) workload() workload.DeleteOptions {
	return workload.DeleteOptions{GracePeriod: d.GracePeriod, IgnoreNotFound: d.IgnoreNotFound, Now: time.Now()}
}

// DeletePods deletes pods by name, like `kubectl delete pod`: each pod
// terminates for its grace period (see above), and a controller's pod is
// replaced at once (a StatefulSet's once the old one is gone). Unless
// del.NoWait it returns when the pods are gone.
func (l *Lab) DeletePods(ctx context.Context, names []string, opts Options, del DeleteOptions) error {
	err := l.update(ctx, opts, labstore.OpDeletePods, func(cur *labstore.State) (*labstore.State, error) {
		return l.Cluster().DeletePods(cur, names, del.workload())
	})
	if err != nil || del.NoWait {
		return err
	}
	return l.waitGone(ctx, names, opts)
}

// DeleteManifest deletes the objects a manifest file names, like `kubectl
// delete -f`: nothing is deleted if one of them does not exist (unless
// del.IgnoreNotFound) or the file does not decode. Unless del.NoWait it
// returns when the pods it deleted are gone.
func (l *Lab) DeleteManifest(ctx context.Context, manifestFile string, opts Options, del DeleteOptions) error {
	data, err := workload.ReadFile(manifestFile)
	if err != nil {
		return err
	}
	m, err := workload.Decode(data, manifestFile)
	if err != nil {
		return err
	}
	var deleting []string
	err = l.update(ctx, opts, labstore.OpDeleteObjects, func(cur *labstore.State) (*labstore.State, error) {
		next, err := l.Cluster().Delete(cur, m, manifestFile, del.workload())
		if err != nil {
			return nil, err
		}
		deleting = newlyTerminating(cur, next)
		return next, nil
	})
	if err != nil || del.NoWait {
		return err
	}
	return l.waitGone(ctx, deleting, opts)
}

// newlyTerminating names the pods next has terminating that cur had not.
func newlyTerminating(cur, next *labstore.State) []string {
	var out []string
	for _, p := range workload.Terminating(next) {
		if old := cur.Pod(p.Name); old == nil || old.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	return out
}

// waitGone waits until none of the named pods is terminating any more,
// reaping each as its server stops. An interruption leaves them
// terminating, for the next command.
func (l *Lab) waitGone(ctx context.Context, names []string, opts Options) error {
	for {
		cur, _, err := l.Store.ReadObjects()
		if err != nil {
			return err
		}
		var left []string
		finished := false
		for _, p := range workload.Terminating(cur) {
			if slices.Contains(names, p.Name) {
				left = append(left, p.Name)
				finished = finished || l.terminated(p)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if finished {
			// Any lab change reaps what is finished first: this one changes nothing else.
			if err := l.update(ctx, opts, labstore.OpReap, l.Cluster().Reconcile); err != nil {
				return err
			}
			continue
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lab %s: stopped waiting (%w): pod %s still terminating; the next command on the lab removes it once its server has stopped", l.Name(), ctx.Err(), strings.Join(left, ", "))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// terminated reports whether a terminating pod is done: its server has
// stopped (its pid file is gone or names a process that is not running; a
// pod without a server has none) or its deadline has passed.
func (l *Lab) terminated(p *corev1.Pod) bool {
	return l.supervisorPID(p.Name) == 0 || !time.Now().Before(p.DeletionTimestamp.Time)
}

// reapFinished removes the terminating pods that are done, in a change of
// its own (the caller holds the lock), and returns the state after it.
func (l *Lab) reapFinished(ctx context.Context, cur *labstore.State, opts Options) (*labstore.State, error) {
	var done []string
	for _, p := range workload.Terminating(cur) {
		if l.terminated(p) {
			done = append(done, p.Name)
		}
	}
	if len(done) == 0 {
		return cur, nil
	}
	next := workload.Reap(cur, done)
	if err := l.commit(ctx, opts, labstore.OpReap, cur, next); err != nil {
		return nil, err
	}
	return next, nil
}

// signalTerminating tells every terminating pod of next that still runs
// that it terminates (again, harmlessly, one that was told already): a
// node's kubelet has its server stop after its delay and closes it at the
// pod's deadline; a pod with a supervisor of its own gets SIGTERM, which
// the supervisor passes to the server, killing it at the deadline.
func (l *Lab) signalTerminating(cur, next *labstore.State, out io.Writer) {
	fresh := newlyTerminating(cur, next)
	terminating := workload.Terminating(next)
	for _, p := range l.terminateServedPods(terminating) {
		if st, ok, _ := l.Store.PodStatus(p.Name); servedByKubelet(st, ok) {
			continue // a stop cut short took its spec: its kubelet closes it at its next sync
		}
		if pid := l.supervisorPID(p.Name); pid != 0 {
			syscall.Kill(pid, syscall.SIGTERM) //nolint:errcheck // gone meanwhile: reaped by the next command
		}
	}
	for _, p := range terminating {
		if slices.Contains(fresh, p.Name) {
			fmt.Fprintf(out, "pod/%s terminating (grace period %ds, until %s)\n", p.Name, *p.DeletionGracePeriodSeconds, p.DeletionTimestamp.Format("15:04:05"))
		}
	}
}
