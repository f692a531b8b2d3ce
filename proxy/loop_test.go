package proxy

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/sources"
)

// fakeSource hands out a generation that tests bump with change().
type fakeSource struct {
	mu      sync.Mutex
	gen     int64
	changed func()
}

func (s *fakeSource) Run(_ context.Context, changed func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = changed
	return nil
}

func (s *fakeSource) List() (*sources.Objects, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.11", Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	return &sources.Objects{Services: []*corev1.Service{svc}, Generation: s.gen}, nil
}

func (s *fakeSource) change() {
	s.mu.Lock()
	s.gen++
	cb := s.changed
	s.mu.Unlock()
	cb()
}

// fakeBackend records syncs (and when each began) and fails the ones it is
// told to; hold, when set, runs at the start of each sync (n counts from
// 1), so a test can keep the loop inside a sync while it acts.
type fakeBackend struct {
	mu        sync.Mutex
	syncs     int
	failNext  int
	snapshots []*model.Snapshot
	started   []time.Time
	hold      func(n int)
}

func (b *fakeBackend) Mode() string     { return "fake" }
func (b *fakeBackend) Describe() string { return "fake kernel" }
func (b *fakeBackend) Sync(snap *model.Snapshot) (SyncStats, error) {
	b.mu.Lock()
	b.started = append(b.started, time.Now())
	n, hold := len(b.started), b.hold
	b.mu.Unlock()
	if hold != nil {
		hold(n)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.syncs++
	b.snapshots = append(b.snapshots, snap)
	if b.failNext > 0 {
		b.failNext--
		return SyncStats{}, errors.New("restore rejected")
	}
	return SyncStats{ServicePorts: len(snap.ServicePorts)}, nil
}

func startLoop(t *testing.T, l *Loop) (outcomes <-chan Outcome) {
	t.Helper()
	ch := make(chan Outcome, 100)
	l.Report = func(o Outcome) { ch <- o }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("loop ended with %v", err)
		}
	})
	return ch
}

func next(t *testing.T, ch <-chan Outcome) Outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(5 * time.Second):
		t.Fatal("no sync within 5s")
		return Outcome{}
	}
}

func TestLoopSyncsAtStartAndOnChange(t *testing.T) {
	src, be := &fakeSource{}, &fakeBackend{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: time.Hour})
	if o := next(t, ch); o.Err != nil || o.Generation != 0 || o.Stats.ServicePorts != 1 {
		t.Fatalf("first sync: %+v", o)
	}
	src.change()
	if o := next(t, ch); o.Generation != 1 {
		t.Fatalf("after a change: %+v", o)
	}
}

// startedAt is when the nth sync (from 1) began.
func (b *fakeBackend) startedAt(n int) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.started[n-1]
}

// TestLoopCoalescesChangesWithinMinSyncPeriod: five changes that come
// while a sync runs make one sync after it, which sees all five, no
// sooner than MinSyncPeriod after the one before, and no sync after it.
// The test holds the loop inside its first sync while it changes the
// source, so no timing decides which sync sees which change.
func TestLoopCoalescesChangesWithinMinSyncPeriod(t *testing.T) {
	const minSync = 300 * time.Millisecond
	entered, release := make(chan struct{}), make(chan struct{})
	src := &fakeSource{}
	be := &fakeBackend{hold: func(n int) {
		if n == 1 {
			close(entered)
			<-release
		}
	}}
	started := time.Now() // before the first sync, so before its lastSync
	ch := startLoop(t, &Loop{Source: src, Backend: be, MinSyncPeriod: minSync, SyncPeriod: time.Hour})
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatal("the loop never started its first sync")
	}
	for i := 0; i < 5; i++ {
		src.change()
	}
	close(release)
	if o := next(t, ch); o.Generation != 0 {
		t.Fatalf("first sync: %+v, want generation 0 (listed before the changes)", o)
	}
	if o := next(t, ch); o.Generation != 5 {
		t.Errorf("the sync after 5 changes saw generation %d, want all 5 in one sync", o.Generation)
	}
	// A lower bound, which a slow host cannot break.
	if d := be.startedAt(2).Sub(started); d < minSync {
		t.Errorf("the second sync began %s after the loop started, want MinSyncPeriod (%s) at least", d, minSync)
	}
	// No sync for changes already synced: the next one is the next change's.
	src.change()
	if o := next(t, ch); o.Generation != 6 {
		t.Errorf("after one more change a sync of generation %d, want 6 (an extra sync of changes already synced?)", o.Generation)
	}
}

func TestLoopRetriesAFailedSync(t *testing.T) {
	src, be := &fakeSource{}, &fakeBackend{failNext: 1}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: time.Hour, RetryPeriod: 50 * time.Millisecond})
	if o := next(t, ch); o.Err == nil {
		t.Fatalf("the first sync should have failed: %+v", o)
	}
	if o := next(t, ch); o.Err != nil {
		t.Fatalf("the retry should have succeeded: %+v", o)
	}
}

// TestLoopResyncsEverySyncPeriod: with no change, the next sync comes a
// SyncPeriod after the one before. The timer starts after a sync ends, so
// the time between two syncs' starts is a SyncPeriod at least, on any host.
func TestLoopResyncsEverySyncPeriod(t *testing.T) {
	const period = 100 * time.Millisecond
	src, be := &fakeSource{}, &fakeBackend{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: period})
	next(t, ch)
	next(t, ch)
	if d := be.startedAt(2).Sub(be.startedAt(1)); d < period {
		t.Errorf("periodic resync began %s after the sync before, want the sync period (%s) at least", d, period)
	}
}
