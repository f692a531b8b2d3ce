package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"
)

// A run's heartbeat: the Lease RunLeaseName in its node agent's
// namespace, renewed every leaseRenewal while the run lives and valid
// for leaseDuration. A later run's sweep deletes only what runs whose
// lease lapsed left (a killed run), never a running run's namespaces.
const (
	leaseDuration = 30 * time.Second
	leaseRenewal  = 10 * time.Second
)

// runLease is a held heartbeat.
type runLease struct {
	t       *Target
	leases  leaseClient
	ns      string
	current *coordinationv1.Lease
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// leaseClient is the Leases of one namespace.
type leaseClient = coordinationclient.LeaseInterface

// stop ends the renewals (the Lease goes with its namespace).
func (l *runLease) stop() {
	l.cancel()
	l.done.Wait()
}

// holdRunLease creates this run's Lease in namespace ns and renews it
// every leaseRenewal until stop, independently of ctx (set-up's context
// ends with set-up).
func (t *Target) holdRunLease(ctx context.Context, ns string) (*runLease, error) {
	now := metav1.NewMicroTime(t.clock.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: RunLeaseName, Labels: runLabels(t.runID)},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(t.runID),
			LeaseDurationSeconds: ptr.To(int32(leaseDuration / time.Second)),
			AcquireTime:          &now,
			RenewTime:            &now,
		},
	}
	leases := t.clientset.CoordinationV1().Leases(ns)
	created, err := leases.Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("the run's heartbeat, Lease %s/%s: %w", ns, RunLeaseName, err)
	}
	renewCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &runLease{t: t, leases: leases, ns: ns, current: created, cancel: cancel}
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		for t.clock.Sleep(renewCtx, leaseRenewal) == nil {
			if err := l.renew(renewCtx); err != nil && renewCtx.Err() == nil {
				fmt.Fprintf(t.opts.Out, "renewing %v\n", err)
			}
		}
	}()
	return l, nil
}

// renew sets the Lease's renewal time to now. After a conflict it reads
// the Lease, to renew the newest version next time.
func (l *runLease) renew(ctx context.Context) error {
	next := l.current.DeepCopy()
	renewed := metav1.NewMicroTime(l.t.clock.Now())
	next.Spec.RenewTime = &renewed
	updated, err := l.leases.Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		if fresh, gerr := l.leases.Get(ctx, RunLeaseName, metav1.GetOptions{}); gerr == nil {
			l.current = fresh
		}
		return fmt.Errorf("the heartbeat %s/%s: %w", l.ns, RunLeaseName, err)
	}
	l.current = updated
	return nil
}

// clock is the time the lease and the sweep go by.
type clock interface {
	Now() time.Time
	// Sleep waits d, or returns ctx's error when it ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
