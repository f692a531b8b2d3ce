package netns

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/network"
)

// Every command that changes a lab holds the lab's lock from its first
// check to its last change, and records its intent in the lab's journal
// (labstore.Intent) before it touches the kernel:
//
//   - prepare: the pods it is about to make, before their namespaces exist.
//     Undone by removing them (whether or not they were made).
//   - commit: the objects the store is to hold and the pods to remove
//     after. Finished by writing the objects and removing the pods.
//
// The next command on the lab finds a killed one's intent under the lock
// and settles it first (rolls a prepared change back, a committed one
// forward), so no pod, namespace or process of the lab exists that the
// store does not know of. A create or delete that was killed is left for
// `svclab delete lab`, which removes it from the kernel's view.

// lock takes the lab's lock and settles what a killed command left.
func (l *Lab) lock(ctx context.Context, opts Options) (unlock func(), err error) {
	unlock, err = l.Store.Lock(ctx)
	if err != nil {
		return nil, err
	}
	if err := l.recover(ctx, opts); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// recover settles the intent a killed command left, if any. The caller
// holds the lock.
func (l *Lab) recover(ctx context.Context, opts Options) error {
	in, err := l.Store.ReadIntent()
	if err != nil || in == nil {
		return err
	}
	switch in.Op {
	case labstore.OpCreate, labstore.OpDelete:
		return interruptedError(l.Name(), in)
	case labstore.OpRestartProxies:
		for _, node := range in.Nodes {
			if l.ProxyPID(node) != 0 {
				continue
			}
			if err := l.startProxy(node, opts); err != nil {
				// Not fatal: the lab works on without that proxy, as
				// `get labs` then shows, and a restart can be retried.
				fmt.Fprintf(opts.Out, "warning: lab %s: finishing an interrupted proxy restart on %s: %v\n", l.Name(), node, err)
				continue
			}
			fmt.Fprintf(opts.Out, "lab %s: an interrupted restart (pid %d) left no proxy on %s: started it\n", l.Name(), in.PID, node)
		}
		return l.Store.ClearIntent()
	}
	verb := "rolled back"
	if in.Phase == labstore.PhaseCommit {
		verb = "finished"
		if err := l.finishCommitted(ctx, in, opts); err != nil {
			return fmt.Errorf("lab %s: finishing an interrupted %s (pid %d): %w", l.Name(), in.Op, in.PID, err)
		}
	}
	done, err := l.settle(in)
	if err != nil {
		return fmt.Errorf("lab %s: settling an interrupted %s (pid %d): %w", l.Name(), in.Op, in.PID, err)
	}
	fmt.Fprintf(opts.Out, "lab %s: an interrupted %s (pid %d) was %s%s\n", l.Name(), in.Op, in.PID, verb, done)
	return nil
}

// finishCommitted does for a committed change what its own command would
// have done after storing it, in the same order: the objects stored, the
// proxies' acknowledgements awaited (a proxy still sending new connections
// to a pod must see it terminating first), then SIGTERM to the terminating
// pods. settle then removes the gone pods. It clears in.Objects, which are
// stored now.
func (l *Lab) finishCommitted(ctx context.Context, in *labstore.Intent, opts Options) error {
	if in.Delta != nil {
		return l.finishDelta(ctx, in, opts)
	}
	if in.Objects == nil {
		return nil
	}
	gen, err := l.Store.WriteObjects(in.Objects)
	if err != nil {
		return err
	}
	if err := l.waitForProxies(ctx, gen, opts); err != nil {
		// The change stands either way; a proxy that cannot follow it is
		// what `get labs` shows.
		fmt.Fprintf(opts.Out, "warning: %v\n", err)
	}
	l.signalTerminating(&labstore.State{}, in.Objects, opts.Out)
	in.Objects = nil
	return nil
}

// settle executes an intent to its end: a prepared change is undone (its
// pods removed), a committed one completed (the store holds its objects,
// then its gone pods are removed). Each step may be repeated, so a settle
// that is itself killed is settled again by the next command; the intent
// is cleared last. It returns what it did, for the user.
func (l *Lab) settle(in *labstore.Intent) (string, error) {
	var did []string
	exists, err := l.podNamespaces()
	if err != nil {
		return "", err
	}
	switch in.Phase {
	case labstore.PhasePrepare:
		for _, p := range in.Pods {
			if err := l.stopPod(p.Name); err != nil {
				return "", err
			}
			if exists[p.Name] {
				did = append(did, "pod/"+p.Name+" removed")
			}
		}
	case labstore.PhaseCommit:
		if in.Objects != nil {
			if _, err := l.Store.WriteObjects(in.Objects); err != nil {
				return "", err
			}
		}
		if in.Delta != nil {
			if _, err := l.Store.WriteDelta(in.Delta); err != nil {
				return "", err
			}
		}
		for _, name := range in.Stop {
			if err := l.stopPod(name); err != nil {
				return "", err
			}
			if exists[name] {
				did = append(did, "pod/"+name+" deleted")
			}
		}
	default:
		return "", fmt.Errorf("journal %s: unknown phase %q", l.Store.Path("intent.json"), in.Phase)
	}
	if err := l.Store.ClearIntent(); err != nil {
		return "", err
	}
	if len(did) == 0 {
		return "", nil
	}
	return ": " + strings.Join(did, ", "), nil
}

// interruptedError says that a create or delete of the lab was killed half
// way, and what removes it.
func interruptedError(lab string, in *labstore.Intent) error {
	return fmt.Errorf("lab %q: its %s was interrupted (pid %d, %s); svclab delete lab --name %s removes what is left",
		lab, in.Op, in.PID, in.Started.Format("15:04:05"), lab)
}

// Interrupted describes a lab-changing command under way or killed half
// way ("" when there is none): `get labs` shows it instead of the lab's
// health, which would otherwise say "running" of a half-built lab.
func Interrupted(name string) string {
	st := labstore.Open(name)
	in, err := st.ReadIntent()
	if err != nil {
		return "unknown: " + err.Error()
	}
	if in == nil {
		return ""
	}
	if st.Busy() {
		return fmt.Sprintf("%s in progress (pid %d)", in.Op, in.PID)
	}
	switch in.Op {
	case labstore.OpCreate, labstore.OpDelete:
		return fmt.Sprintf("incomplete (%s interrupted; svclab delete lab --name %s)", in.Op, name)
	}
	return fmt.Sprintf("incomplete (%s interrupted; the next command on the lab settles it)", in.Op)
}

// Pending returns what the lab's journal says is under way or was
// interrupted: the pods being made (they may exist but are not yet in the
// store) and the pods being removed (no longer in the store, they may
// still exist), so that `get pods` shows every pod the kernel may have.
func (l *Lab) Pending() (op string, making []*corev1.Pod, removing []string, err error) {
	in, err := l.Store.ReadIntent()
	if err != nil || in == nil {
		return "", nil, nil, err
	}
	return in.Op, in.Pods, in.Stop, nil
}

// rollBack undoes a change that failed or was interrupted before its
// objects were stored, or whose store write failed after the commit (an
// interruption once they are stored leaves the change to the next command:
// committedButInterrupted): the store holds cur again and the new pods are
// removed. The
// journal says so first, so a kill during the undo is finished by the next
// command. It returns cause, with what was undone.
func (l *Lab) rollBack(ctx context.Context, op string, cur *labstore.State, made []*corev1.Pod, committed bool, cause error, opts Options) error {
	in := &labstore.Intent{Op: op, Phase: labstore.PhasePrepare, Pods: made}
	if committed {
		var names []string
		for _, p := range made {
			names = append(names, p.Name)
		}
		in = &labstore.Intent{Op: op, Phase: labstore.PhaseCommit, Objects: cur, Stop: names}
	}
	if err := l.Store.WriteIntent(in); err != nil {
		return fmt.Errorf("%w (and rolling back failed: %v; the next command on the lab retries)", cause, err)
	}
	if committed {
		// The proxies stop sending to the new pods before they go.
		if gen, err := l.Store.WriteObjects(cur); err == nil {
			wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.Timeout)
			l.waitForProxies(wait, gen, opts) //nolint:errcheck // best effort: the error that matters is cause
			cancel()
		}
	}
	done, err := l.settle(in)
	if err != nil {
		return fmt.Errorf("%w (and rolling back failed: %v; the next command on the lab retries)", cause, err)
	}
	return fmt.Errorf("%w; rolled back%s", cause, done)
}

// podNamespaces says which of the lab's hosts have a namespace now (pods
// being made or removed may or may not).
func (l *Lab) podNamespaces() (map[string]bool, error) {
	names, err := network.Namespaces(l.Name())
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, ns := range names {
		if lab, host, ok := network.SplitNamespaceName(ns); ok && lab == l.Name() {
			out[host] = true
		}
	}
	return out, nil
}
