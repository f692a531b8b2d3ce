package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// staleAfter is how old a heartbeat (or, without one, a run's newest
// namespace) must be for its run to count as dead without watching it:
// far more than any clock skew between two machines running the suite.
const staleAfter = 5 * time.Minute

// Cleanup is `svclab conformance cleanup`: the sweep every run starts
// with, waiting until what it deletes is gone. It deletes the namespaces
// (and so the node agents) of every run that no longer runs and puts
// back a proxy ConfigMap a killed --disruptive run left changed; a run
// that still runs is left alone, and said so.
func Cleanup(ctx context.Context, cfg *rest.Config, opts Options) error {
	t, err := connect(ctx, cfg, opts)
	if err != nil {
		return err
	}
	_, err = t.sweep(ctx, true)
	return err
}

// sweep deletes what runs that no longer run left: their namespaces
// (labelled ManagedByLabel, grouped by RunLabel; a run is dead when its
// heartbeat lapsed, see liveRuns), and the proxy configuration one of
// them saved and did not put back (restored first). It says on Out what
// it found and did, and returns how many objects it deleted or restored.
// wait: until the deleted namespaces are gone.
func (t *Target) sweep(ctx context.Context, wait bool) (int, error) {
	list, err := t.clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: managedSelector})
	if err != nil {
		return 0, fmt.Errorf("listing the suite's namespaces: %w", err)
	}
	runs := map[string][]corev1.Namespace{}
	for _, ns := range list.Items {
		switch id := ns.Labels[RunLabel]; {
		case id == "":
			// Not a run's: someone labelled it (a Job's namespace, say).
			fmt.Fprintf(t.opts.Out, "sweep: left namespace %s: labelled %s but not by a run (no %s label)\n", ns.Name, managedSelector, RunLabel)
		case id != t.runID:
			runs[id] = append(runs[id], ns)
		}
	}
	saved, err := t.savedByEarlierRun(ctx)
	if err != nil {
		return 0, err
	}
	if saved != nil && runs[saved.Run] == nil {
		runs[saved.Run] = nil // a run whose namespaces are gone: dead
	}
	live, err := t.liveRuns(ctx, runs)
	if err != nil {
		return 0, err
	}
	swept := 0
	var errs []error
	if saved != nil {
		if live[saved.Run] {
			fmt.Fprintf(t.opts.Out, "sweep: %s/%s holds run %s's saved proxy configuration; that run still runs and puts it back itself\n", saved.Namespace, SavedProxyConfigName, saved.Run)
		} else if err := t.restoreProxyConfig(ctx, saved); err != nil {
			errs = append(errs, fmt.Errorf("run %s, killed during a --disruptive spec, left %s/%s changed: %w", saved.Run, saved.Namespace, saved.Name, err))
		} else {
			fmt.Fprintf(t.opts.Out, "sweep: put back %s/%s as run %s (killed) saved it\n", saved.Namespace, saved.Name, saved.Run)
			swept++
		}
	}
	var deleted []string
	for _, id := range sortedRuns(runs) {
		if live[id] {
			fmt.Fprintf(t.opts.Out, "sweep: left run %s's namespaces (%s): it still runs\n", id, namespaceNames(runs[id]))
			continue
		}
		for _, ns := range runs[id] {
			err := t.clientset.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting namespace %s of run %s: %w", ns.Name, id, err))
				continue
			}
			fmt.Fprintf(t.opts.Out, "sweep: deleted namespace %s, left by run %s\n", ns.Name, id)
			deleted = append(deleted, ns.Name)
			swept++
		}
	}
	if wait {
		for _, ns := range deleted {
			if err := t.deleteNamespace(ctx, ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if swept == 0 && len(errs) == 0 {
		fmt.Fprintln(t.opts.Out, "sweep: nothing left by earlier runs")
	}
	return swept, errors.Join(errs...)
}

// savedByEarlierRun is the proxy configuration another run saved and did
// not put back, or nil. Without the right to read it (a cluster that
// never granted `svclab conformance rbac`'s Role in the proxy's
// namespace) there is none to find, and it says so.
func (t *Target) savedByEarlierRun(ctx context.Context) (*savedProxyConfig, error) {
	cm, err := t.clientset.CoreV1().ConfigMaps(t.proxyNS).Get(ctx, SavedProxyConfigName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		fmt.Fprintf(t.opts.Out, "sweep: not looking for a proxy configuration a killed run left changed: %v\n", err)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s/%s: %w", t.proxyNS, SavedProxyConfigName, err)
	}
	if cm.Labels[RunLabel] == t.runID {
		return nil, nil
	}
	return readSavedProxyConfig(cm)
}

// liveRuns says which runs still run. A run lives while it renews its
// heartbeat (RunLeaseName in one of its namespaces). A heartbeat, or a
// run without one (yet), older than staleAfter is dead at once; a recent
// one is watched until it is renewed (the run lives) or a whole
// leaseDuration passes without renewal (the run was killed).
func (t *Target) liveRuns(ctx context.Context, runs map[string][]corev1.Namespace) (map[string]bool, error) {
	live := map[string]bool{}
	type watched struct {
		since   time.Time // when this sweep first saw its current state
		renewed time.Time // the heartbeat's renewal time then (zero: none)
	}
	pending := map[string]*watched{}
	for id := range runs {
		pending[id] = nil
	}
	told := map[string]bool{}
	for len(pending) > 0 {
		now := t.clock.Now()
		for _, id := range sortedRuns(runs) {
			w, ok := pending[id]
			if !ok {
				continue
			}
			lease, err := t.runLease(ctx, runs[id])
			if err != nil {
				return nil, err
			}
			renewed, last := time.Time{}, newest(runs[id])
			if lease != nil && lease.Spec.RenewTime != nil {
				renewed = lease.Spec.RenewTime.Time
				last = renewed
			}
			switch {
			case !last.IsZero() && now.Sub(last) > staleAfter, len(runs[id]) == 0 && lease == nil:
				delete(pending, id) // dead: long silent, or nothing left to renew in
			case w == nil || !w.renewed.Equal(renewed):
				if w != nil {
					live[id] = true // renewed while watched
					delete(pending, id)
					continue
				}
				pending[id] = &watched{since: now, renewed: renewed}
			case now.Sub(w.since) >= leaseDuration:
				delete(pending, id) // not renewed for a whole lease: killed
			}
			if _, still := pending[id]; still && !told[id] {
				told[id] = true
				fmt.Fprintf(t.opts.Out, "sweep: run %s was active %s ago; watching its heartbeat for up to %s to tell whether it still runs\n",
					id, now.Sub(last).Round(time.Second), leaseDuration)
			}
		}
		if len(pending) == 0 {
			break
		}
		if err := t.clock.Sleep(ctx, time.Second); err != nil {
			return nil, fmt.Errorf("watching earlier runs' heartbeats: %w", err)
		}
	}
	return live, nil
}

// runLease is the heartbeat Lease in one of a run's namespaces, or nil.
func (t *Target) runLease(ctx context.Context, namespaces []corev1.Namespace) (*coordinationv1.Lease, error) {
	for _, ns := range namespaces {
		l, err := t.clientset.CoordinationV1().Leases(ns.Name).Get(ctx, RunLeaseName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading run %s's heartbeat %s/%s: %w", ns.Labels[RunLabel], ns.Name, RunLeaseName, err)
		}
		return l, nil
	}
	return nil, nil
}

// newest is the creation time of the newest namespace.
func newest(namespaces []corev1.Namespace) time.Time {
	var t time.Time
	for _, ns := range namespaces {
		if c := ns.CreationTimestamp.Time; c.After(t) {
			t = c
		}
	}
	return t
}

func sortedRuns(runs map[string][]corev1.Namespace) []string {
	var ids []string
	for id := range runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func namespaceNames(namespaces []corev1.Namespace) string {
	var names []string
	for _, ns := range namespaces {
		names = append(names, ns.Name)
	}
	return strings.Join(names, ", ")
}
