package sources

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Key names a namespaced object.
type Key struct{ Namespace, Name string }

// Changes are the objects that changed since the previous call to
// Tracking.Changes, each in its latest state; a nil object was deleted.
type Changes struct {
	Services       map[Key]*corev1.Service
	EndpointSlices map[Key]*discoveryv1.EndpointSlice
	// Generation is as in Objects.
	Generation int64
	// Lost is true when the source could not follow every change (its
	// watch overflowed or failed): the caller must List everything.
	Lost bool
}

// Len is the number of changed objects.
func (c *Changes) Len() int { return len(c.Services) + len(c.EndpointSlices) }

// Tracking is a Source that also tells what changed, so that a sync costs
// what changed rather than what exists. Upstream: the informers' event
// handlers feeding ServiceChangeTracker and EndpointsChangeTracker.
type Tracking interface {
	Source
	// Changes returns, and forgets, what changed since its previous call
	// (or since Run). Calling it before List and applying its result after
	// is safe: every change carries the object's latest state.
	Changes() (*Changes, error)
}

// pending collects an informer's changes between two calls to Changes;
// safe for concurrent use. An informer loses nothing (after a broken watch
// it relists and delivers the differences, deletions as tombstones), so
// its changes are never Lost.
type pending struct {
	mu       sync.Mutex
	services map[Key]*corev1.Service
	slices   map[Key]*discoveryv1.EndpointSlice
}

func (p *pending) service(k Key, svc *corev1.Service) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.services == nil {
		p.services = map[Key]*corev1.Service{}
	}
	p.services[k] = svc
}

func (p *pending) slice(k Key, s *discoveryv1.EndpointSlice) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.slices == nil {
		p.slices = map[Key]*discoveryv1.EndpointSlice{}
	}
	p.slices[k] = s
}

// take returns the collected changes and starts a new collection.
func (p *pending) take() *Changes {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &Changes{Services: p.services, EndpointSlices: p.slices}
	p.services, p.slices = nil, nil
	return c
}
