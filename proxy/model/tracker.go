package model

import (
	"cmp"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Tracker is the incremental form of BuildFamily: it keeps the Services and
// EndpointSlices it was told about and the service ports built from them,
// and Snapshot rebuilds only the services that changed since the previous
// Snapshot. The result equals BuildFamily over the same objects (see the
// property test), with one more promise: a service port that did not change
// keeps its *ServicePort, so renderers that compare pointers first
// (ServicePort.Equal) skip it at the cost of one comparison.
//
// Upstream: ServiceChangeTracker and EndpointsChangeTracker
// (pkg/proxy/servicechangetracker.go, endpointschangetracker.go), which
// record pending changes per service name and apply them to ServicePortMap
// and EndpointsMap at sync time. Here the pending changes are the set of
// dirty service names, and the objects themselves are kept (as upstream's
// EndpointSliceCache keeps slices), so a change is applied by rebuilding
// that one service from its current objects.
//
// Objects passed in are kept by reference: treat them as immutable (an
// informer's cache and the lab store's reader both hand out objects nobody
// changes). A Tracker is not safe for concurrent use.
type Tracker struct {
	family   corev1.IPFamily
	nodeName string

	services map[serviceKey]*corev1.Service
	// slices holds every usable slice by its own namespace/name, and owner
	// the service it counts for (both keyed by the slice's key).
	slices map[serviceKey]*discoveryv1.EndpointSlice
	owner  map[serviceKey]serviceKey
	// slicesOf indexes usable slices by the service they belong to.
	slicesOf map[serviceKey]map[string]*discoveryv1.EndpointSlice

	// ports are the built service ports of each service, sorted by name.
	ports map[serviceKey][]*ServicePort
	dirty map[serviceKey]struct{}
	// sorted are the service ports of the latest Snapshot.
	sorted []*ServicePort
}

// NewTracker returns an empty Tracker for one IP family and node.
func NewTracker(family corev1.IPFamily, nodeName string) *Tracker {
	t := &Tracker{family: family, nodeName: nodeName}
	t.clearObjects()
	t.ports = map[serviceKey][]*ServicePort{}
	t.dirty = map[serviceKey]struct{}{}
	return t
}

func (t *Tracker) clearObjects() {
	t.services = map[serviceKey]*corev1.Service{}
	t.slices = map[serviceKey]*discoveryv1.EndpointSlice{}
	t.owner = map[serviceKey]serviceKey{}
	t.slicesOf = map[serviceKey]map[string]*discoveryv1.EndpointSlice{}
}

// SetService records a Service added or updated.
func (t *Tracker) SetService(svc *corev1.Service) {
	if svc == nil {
		return
	}
	k := serviceKey{svc.Namespace, svc.Name}
	t.services[k] = svc
	t.dirty[k] = struct{}{}
}

// DeleteService records that the Service namespace/name is gone.
func (t *Tracker) DeleteService(namespace, name string) {
	k := serviceKey{namespace, name}
	delete(t.services, k)
	t.dirty[k] = struct{}{}
}

// SetEndpointSlice records an EndpointSlice added or updated. A slice of
// another address type, or without the service-name label, counts for no
// service (as in BuildFamily); one whose label changed moves.
func (t *Tracker) SetEndpointSlice(s *discoveryv1.EndpointSlice) {
	if s == nil {
		return
	}
	t.DeleteEndpointSlice(s.Namespace, s.Name)
	svcName := s.Labels[discoveryv1.LabelServiceName]
	if s.AddressType != addressTypeOf(t.family) || s.Namespace == "" || s.Name == "" || svcName == "" {
		return
	}
	k, owner := serviceKey{s.Namespace, s.Name}, serviceKey{s.Namespace, svcName}
	t.slices[k], t.owner[k] = s, owner
	if t.slicesOf[owner] == nil {
		t.slicesOf[owner] = map[string]*discoveryv1.EndpointSlice{}
	}
	t.slicesOf[owner][s.Name] = s
	t.dirty[owner] = struct{}{}
}

// DeleteEndpointSlice records that the EndpointSlice namespace/name is gone.
func (t *Tracker) DeleteEndpointSlice(namespace, name string) {
	k := serviceKey{namespace, name}
	owner, ok := t.owner[k]
	if !ok {
		return
	}
	delete(t.slices, k)
	delete(t.owner, k)
	delete(t.slicesOf[owner], name)
	if len(t.slicesOf[owner]) == 0 {
		delete(t.slicesOf, owner)
	}
	t.dirty[owner] = struct{}{}
}

// Replace forgets every object and records these, as after a fresh List
// (the periodic full resync). Service ports that come out equal keep their
// pointers.
func (t *Tracker) Replace(services []*corev1.Service, slices []*discoveryv1.EndpointSlice) {
	for k := range t.ports {
		t.dirty[k] = struct{}{}
	}
	t.clearObjects()
	for _, s := range services {
		t.SetService(s)
	}
	for _, s := range slices {
		t.SetEndpointSlice(s)
	}
}

// Pending is the number of services changed since the last Snapshot.
func (t *Tracker) Pending() int { return len(t.dirty) }

// Snapshot applies the pending changes and returns the current snapshot. Its
// ServicePorts slice is new; the service ports of unchanged services are
// those of the previous snapshot. The work is proportional to the changed
// services plus one copy of the (pointer) list. It sets StablePointers.
func (t *Tracker) Snapshot() *Snapshot {
	keys := slices.SortedFunc(maps.Keys(t.dirty), compareServiceKeys)
	clear(t.dirty)
	added := 0
	for _, k := range keys {
		next := t.buildService(k, t.ports[k])
		added += len(next) - len(t.ports[k])
		if len(next) == 0 {
			delete(t.ports, k)
		} else {
			t.ports[k] = next
		}
	}
	t.sorted = t.merge(keys, max(0, len(t.sorted)+added))
	return &Snapshot{NodeName: t.nodeName, Family: t.family, ServicePorts: t.sorted, StablePointers: true}
}

// merge returns the previous sorted list with the ports of every key in
// keys (sorted) replaced by their current ones.
func (t *Tracker) merge(keys []serviceKey, size int) []*ServicePort {
	old := t.sorted
	out := make([]*ServicePort, 0, size)
	i := 0
	for _, k := range keys {
		lo, _ := slices.BinarySearchFunc(old[i:], k, func(sp *ServicePort, k serviceKey) int {
			return compareServiceKeys(serviceKey{sp.Name.Namespace, sp.Name.Name}, k)
		})
		lo += i
		out = append(out, old[i:lo]...)
		hi := lo
		for hi < len(old) && old[hi].Name.Namespace == k.namespace && old[hi].Name.Name == k.name {
			hi++
		}
		out = append(out, t.ports[k]...)
		i = hi
	}
	return append(out, old[i:]...)
}

// buildService builds the service ports of one service from its current
// objects, reusing a previous *ServicePort when it comes out equal.
func (t *Tracker) buildService(k serviceKey, previous []*ServicePort) []*ServicePort {
	svc := t.services[k]
	if svc == nil || shouldSkipService(svc) {
		return nil
	}
	clusterIP, ok := clusterIPOfFamily(t.family, svc)
	if !ok {
		return nil
	}
	group := slices.SortedFunc(maps.Values(t.slicesOf[k]), func(a, b *discoveryv1.EndpointSlice) int {
		return cmp.Compare(a.Name, b.Name)
	})
	out := make([]*ServicePort, 0, len(svc.Spec.Ports))
	for i := range svc.Spec.Ports {
		sp := newServicePort(t.family, svc, &svc.Spec.Ports[i], clusterIP)
		sp.Endpoints = endpointsForPort(t.family, sp.Name, group, t.nodeName)
		out = append(out, sp)
	}
	slices.SortStableFunc(out, func(a, b *ServicePort) int { return a.Name.Compare(b.Name) })
	out = compactByName(out)
	for i, sp := range out {
		j, found := slices.BinarySearchFunc(previous, sp.Name, func(p *ServicePort, n ServicePortName) int { return p.Name.Compare(n) })
		if found && previous[j].Equal(sp) {
			out[i] = previous[j]
		}
	}
	return out
}

func compareServiceKeys(a, b serviceKey) int {
	if c := cmp.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.name, b.name)
}
