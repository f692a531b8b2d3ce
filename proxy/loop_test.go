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

// fakeBackend records syncs and fails the ones it is told to.
type fakeBackend struct {
	mu        sync.Mutex
	syncs     int
	failNext  int
	snapshots []*model.Snapshot
}

func (b *fakeBackend) Mode() string     { return "fake" }
func (b *fakeBackend) Describe() string { return "fake kernel" }
func (b *fakeBackend) Sync(snap *model.Snapshot) (SyncStats, error) {
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

func TestLoopCoalescesChangesWithinMinSyncPeriod(t *testing.T) {
	src, be := &fakeSource{}, &fakeBackend{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, MinSyncPeriod: 300 * time.Millisecond, SyncPeriod: time.Hour})
	next(t, ch)
	for i := 0; i < 5; i++ {
		src.change()
	}
	o := next(t, ch)
	if o.Generation != 5 {
		t.Errorf("the sync after 5 quick changes saw generation %d, want all 5 in one sync", o.Generation)
	}
	select {
	case extra := <-ch:
		t.Errorf("an extra sync for changes already synced: %+v", extra)
	case <-time.After(500 * time.Millisecond):
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

func TestLoopResyncsEverySyncPeriod(t *testing.T) {
	src, be := &fakeSource{}, &fakeBackend{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: 100 * time.Millisecond})
	next(t, ch)
	start := time.Now()
	next(t, ch)
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("periodic resync came after %s, want about the sync period", d)
	}
}
