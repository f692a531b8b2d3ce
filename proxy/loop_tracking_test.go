package proxy

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/proxy/sources"
)

// trackingSource is a sources.Tracking whose services tests add one at a
// time; it counts Lists.
type trackingSource struct {
	mu       sync.Mutex
	services map[sources.Key]*corev1.Service
	pending  map[sources.Key]*corev1.Service
	lost     bool
	lists    int
	changed  func()
}

func newTrackingSource() *trackingSource {
	return &trackingSource{services: map[sources.Key]*corev1.Service{}, pending: map[sources.Key]*corev1.Service{}}
}

func (s *trackingSource) Run(_ context.Context, changed func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = changed
	return nil
}

func (s *trackingSource) List() (*sources.Objects, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	objs := &sources.Objects{}
	for _, svc := range s.services {
		objs.Services = append(objs.Services, svc)
	}
	return objs, nil
}

func (s *trackingSource) Changes() (*sources.Changes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &sources.Changes{Services: s.pending, Lost: s.lost}
	s.pending, s.lost = map[sources.Key]*corev1.Service{}, false
	return c, nil
}

// add adds a ClusterIP service; lose makes the change one the source lost
// track of.
func (s *trackingSource) add(name string, lose bool) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.11", Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	s.mu.Lock()
	k := sources.Key{Namespace: "default", Name: name}
	s.services[k] = svc
	if lose {
		s.lost = true
	} else {
		s.pending[k] = svc
	}
	cb := s.changed
	s.mu.Unlock()
	cb()
}

func (s *trackingSource) listCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// fullSyncBackend is a fakeBackend that counts forced full syncs and has a
// canary tests can remove.
type fullSyncBackend struct {
	fakeBackend
	forced        int
	canaryMissing bool
}

func (b *fullSyncBackend) ForceFullSync() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forced++
	b.canaryMissing = false // a full sync puts the canary back
}

func (b *fullSyncBackend) CanaryMissing() (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.canaryMissing, nil
}

func (b *fullSyncBackend) forcedCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.forced
}

func TestLoopAppliesChangesWithoutListing(t *testing.T) {
	src, be := newTrackingSource(), &fullSyncBackend{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: time.Hour})
	next(t, ch)
	for i, name := range []string{"a", "b", "c"} {
		src.add(name, false)
		if o := next(t, ch); o.Err != nil || o.Stats.ServicePorts != i+1 {
			t.Fatalf("after adding %s: %+v", name, o)
		}
	}
	if n := src.listCount(); n != 1 {
		t.Errorf("the source was listed %d times, want once (at start): changes must be applied incrementally", n)
	}
	if n := be.forcedCount(); n != 1 {
		t.Errorf("%d forced full syncs, want 1 (the first)", n)
	}
}

func TestLoopListsWhenTheSourceLostChanges(t *testing.T) {
	src, be := newTrackingSource(), &fullSyncBackend{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: time.Hour})
	next(t, ch)
	src.add("a", true)
	if o := next(t, ch); o.Stats.ServicePorts != 1 {
		t.Fatalf("after a lost change: %+v, want the listed service", o)
	}
	if n := src.listCount(); n != 2 {
		t.Errorf("%d Lists, want 2", n)
	}
}

func TestLoopFullResyncEveryFullSyncPeriod(t *testing.T) {
	src, be := newTrackingSource(), &fullSyncBackend{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: 50 * time.Millisecond, FullSyncPeriod: 200 * time.Millisecond})
	deadline := time.Now().Add(5 * time.Second)
	for be.forcedCount() < 3 && time.Now().Before(deadline) {
		next(t, ch)
	}
	if n := be.forcedCount(); n < 3 {
		t.Fatalf("%d forced full syncs in 5s, want one every 200ms", n)
	}
	if n := src.listCount(); n < 3 {
		t.Errorf("%d Lists, want one per full resync", n)
	}
}

// TestLoopFullResyncWhenTheCanaryIsGone: a missing canary forces a full
// rewrite of the rules, without listing the source again.
func TestLoopFullResyncWhenTheCanaryIsGone(t *testing.T) {
	src, be := newTrackingSource(), &fullSyncBackend{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: 50 * time.Millisecond})
	next(t, ch)
	next(t, ch) // a periodic sync with the canary in place
	if n := be.forcedCount(); n != 1 {
		t.Fatalf("%d forced full syncs before the canary went, want 1", n)
	}
	lists := src.listCount()
	be.mu.Lock()
	be.canaryMissing = true
	be.mu.Unlock()
	// A periodic sync may be under way (or reported) already, its canary
	// checked before the canary went: wait for the sync that forces the
	// rewrite, one outcome at a time.
	for end := time.Now().Add(30 * time.Second); be.forcedCount() < 2; {
		if time.Now().After(end) {
			t.Fatal("no forced full sync within 30 s of the canary going")
		}
		next(t, ch)
	}
	if n := be.forcedCount(); n != 2 {
		t.Errorf("%d forced full syncs after the canary went, want 2 (a full sync puts it back)", n)
	}
	// The kernel lost the rules, not the tracker its objects: the rewrite
	// comes from the tracker, as upstream's forceSyncProxyRules.
	if n := src.listCount(); n != lists {
		t.Errorf("the canary's full sync listed the source (%d Lists, was %d)", n, lists)
	}
}
