package proxy

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/sources"
)

// conntrackRecorder is a Loop.CleanConntrack that records the snapshots
// it is given and fails when told to.
type conntrackRecorder struct {
	mu    sync.Mutex
	snaps []*model.Snapshot
	fail  bool
}

func (r *conntrackRecorder) clean(snap *model.Snapshot) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snaps = append(r.snaps, snap)
	if r.fail {
		return 0, errors.New("netlink: operation not permitted")
	}
	return 1, nil
}

func (r *conntrackRecorder) cleaned() []*model.Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*model.Snapshot(nil), r.snaps...)
}

// TestLoopCleansConntrackAfterSuccessfulSyncs: the stale UDP flows are
// cleaned after every successful sync, with the snapshot the backend
// synced, before the outcome is reported; never after a failed sync; and
// a cleanup that fails does not fail the sync.
func TestLoopCleansConntrackAfterSuccessfulSyncs(t *testing.T) {
	src, be, ct := &fakeSource{}, &fakeBackend{}, &conntrackRecorder{}
	ch := startLoop(t, &Loop{Source: src, Backend: be, SyncPeriod: time.Hour, RetryPeriod: 10 * time.Millisecond, CleanConntrack: ct.clean})

	if o := next(t, ch); o.Err != nil {
		t.Fatalf("first sync: %v", o.Err)
	}
	if got := ct.cleaned(); len(got) != 1 || got[0] != be.snapshots[0] {
		t.Fatalf("after the first sync's outcome: cleaned %d snapshots, want 1, the synced one", len(got))
	}

	be.mu.Lock()
	be.failNext = 1
	be.mu.Unlock()
	src.change()
	if o := next(t, ch); o.Err == nil {
		t.Fatal("the second sync should have failed")
	}
	if got := ct.cleaned(); len(got) != 1 {
		t.Fatalf("after a failed sync: cleaned %d times, want still 1", len(got))
	}

	ct.mu.Lock()
	ct.fail = true
	ct.mu.Unlock()
	if o := next(t, ch); o.Err != nil {
		t.Fatalf("the retry: %v; a failed cleanup must not fail the sync", o.Err)
	}
	if got := ct.cleaned(); len(got) != 2 {
		t.Fatalf("after the retry: cleaned %d times, want 2", len(got))
	}
}

// objectsSource is a Source of the objects a test sets.
type objectsSource struct {
	mu      sync.Mutex
	objs    sources.Objects
	changed func()
}

func (s *objectsSource) Run(_ context.Context, changed func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = changed
	return nil
}

func (s *objectsSource) List() (*sources.Objects, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objs
	return &o, nil
}

// set replaces the objects and tells the loop.
func (s *objectsSource) set(svcs []*corev1.Service, slices ...*discoveryv1.EndpointSlice) {
	s.mu.Lock()
	s.objs = sources.Objects{Services: svcs, EndpointSlices: slices, Generation: s.objs.Generation + 1}
	cb := s.changed
	s.mu.Unlock()
	if cb != nil {
		cb()
	}
}

// TestLoopCleansConntrackOnlyWhenAFlowCanBeStale: a partial sync reads
// the conntrack table only when a UDP service address or its serving
// endpoints changed since the last cleanup; a TCP-only change or a
// readiness change that keeps the endpoint serving reads nothing.
func TestLoopCleansConntrackOnlyWhenAFlowCanBeStale(t *testing.T) {
	dns := fixtures.Service("kube-system", "kube-dns", "10.96.0.10", []corev1.ServicePort{fixtures.ServicePort("dns", corev1.ProtocolUDP, 53, 0)})
	web := fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 0)})
	dnsSlice := func(eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return fixtures.EndpointSlice("kube-system", "kube-dns", []discoveryv1.EndpointPort{fixtures.EndpointPort("dns", corev1.ProtocolUDP, 53)}, eps...)
	}
	webSlice := func(eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)}, eps...)
	}
	svcs := []*corev1.Service{dns, web}
	src, ct := &objectsSource{}, &conntrackRecorder{}
	src.set(svcs, dnsSlice(fixtures.Endpoint("10.244.1.2", "node1")), webSlice(fixtures.Endpoint("10.244.1.3", "node1")))
	ch := startLoop(t, &Loop{Source: src, Backend: &fakeBackend{}, NodeName: "node1", SyncPeriod: time.Hour, CleanConntrack: ct.clean})

	steps := []struct {
		name   string
		slices []*discoveryv1.EndpointSlice
		clean  bool
	}{
		{"the first sync", nil, true},
		{"web's endpoint moved (TCP only)", []*discoveryv1.EndpointSlice{dnsSlice(fixtures.Endpoint("10.244.1.2", "node1")), webSlice(fixtures.Endpoint("10.244.1.4", "node1"))}, false},
		{"a second DNS endpoint", []*discoveryv1.EndpointSlice{dnsSlice(fixtures.Endpoint("10.244.1.2", "node1"), fixtures.Endpoint("10.244.1.5", "node1")), webSlice(fixtures.Endpoint("10.244.1.4", "node1"))}, true},
		{"nothing changed", []*discoveryv1.EndpointSlice{dnsSlice(fixtures.Endpoint("10.244.1.2", "node1"), fixtures.Endpoint("10.244.1.5", "node1")), webSlice(fixtures.Endpoint("10.244.1.4", "node1"))}, false},
		{"a DNS endpoint terminating but still serving", []*discoveryv1.EndpointSlice{dnsSlice(fixtures.Endpoint("10.244.1.2", "node1"), fixtures.Endpoint("10.244.1.5", "node1", fixtures.Conditions(false, true, true))), webSlice(fixtures.Endpoint("10.244.1.4", "node1"))}, false},
		{"a DNS endpoint no longer serving", []*discoveryv1.EndpointSlice{dnsSlice(fixtures.Endpoint("10.244.1.2", "node1")), webSlice(fixtures.Endpoint("10.244.1.4", "node1"))}, true},
	}
	cleans := 0
	for _, step := range steps {
		if step.slices != nil {
			src.set(svcs, step.slices...)
		}
		if o := next(t, ch); o.Err != nil {
			t.Fatalf("%s: %v", step.name, o.Err)
		}
		if step.clean {
			cleans++
		}
		if got := len(ct.cleaned()); got != cleans {
			t.Fatalf("after %s: %d cleanups, want %d", step.name, got, cleans)
		}
	}
}
