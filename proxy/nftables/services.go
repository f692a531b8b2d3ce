package nftables

import (
	"slices"

	"github.com/svclab/svclab/proxy/model"
)

// serviceID is a service's namespace and name: upstream rewrites the
// chains of a whole service when any of its ports or endpoints changed.
type serviceID struct{ namespace, name string }

func serviceOf(n model.ServicePortName) serviceID { return serviceID{n.Namespace, n.Name} }

// compare orders services as the snapshot does (namespace, then name).
func (a serviceID) compare(b serviceID) int {
	switch {
	case a.namespace != b.namespace:
		return compareStrings(a.namespace, b.namespace)
	default:
		return compareStrings(a.name, b.name)
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// serviceState is what the last committed transaction wrote for one
// service: copies of its ports (to notice a change, even one made in place
// in the caller's snapshot), the snapshot's own pointers when it promised
// model.Snapshot.StablePointers, its chains and affinity sets, and the
// elements it wants.
type serviceState struct {
	ports        []*model.ServicePort
	sources      []*model.ServicePort
	chains       []string
	affinitySets []string
	wants        []elementWant
}

// elementWant is one element a service wants, by storage and key.
type elementWant struct {
	storage *elementStorage
	key     string
}

// serviceGroup is one service's ports in a snapshot (they are adjacent:
// the snapshot is sorted by namespace, name, port).
type serviceGroup struct {
	id    serviceID
	ports []*model.ServicePort
}

// groupServices splits the snapshot's ports by service.
func groupServices(snap *model.Snapshot) []serviceGroup {
	groups := make([]serviceGroup, 0, len(snap.ServicePorts))
	for i := 0; i < len(snap.ServicePorts); {
		id := serviceOf(snap.ServicePorts[i].Name)
		j := i + 1
		for j < len(snap.ServicePorts) && serviceOf(snap.ServicePorts[j].Name) == id {
			j++
		}
		groups = append(groups, serviceGroup{id: id, ports: snap.ServicePorts[i:j]})
		i = j
	}
	return groups
}

// unchanged reports whether g's ports equal what st recorded. Under the
// StablePointers promise (stable) the same pointers are the same ports,
// without comparing them; other pointers may still hold equal ports.
func (st *serviceState) unchanged(g serviceGroup, stable bool) bool {
	if st == nil {
		return false
	}
	if stable && slices.Equal(st.sources, g.ports) {
		return true
	}
	return slices.EqualFunc(st.ports, g.ports, (*model.ServicePort).Equal)
}

// changes are the services a render rewrites: every one on a full render,
// else those added or changed, and those removed since the last commit.
type changes struct {
	render  []serviceGroup
	removed []serviceID
}

// changedServices compares snap with what was committed.
func (r *Renderer) changedServices(snap *model.Snapshot, full bool) changes {
	groups := groupServices(snap)
	if full {
		return changes{render: groups}
	}
	var c changes
	present := 0
	for _, g := range groups {
		st, ok := r.services[g.id]
		if ok {
			present++
		}
		if !st.unchanged(g, snap.StablePointers) {
			c.render = append(c.render, g)
		}
	}
	if present != len(r.services) {
		c.removed = removedServices(groups, r.services)
	}
	return c
}

// removedServices are the committed services not in groups.
func removedServices(groups []serviceGroup, services map[serviceID]*serviceState) []serviceID {
	seen := make(map[serviceID]struct{}, len(groups))
	for _, g := range groups {
		seen[g.id] = struct{}{}
	}
	var removed []serviceID
	for id := range services {
		if _, ok := seen[id]; !ok {
			removed = append(removed, id)
		}
	}
	return removed
}

func cloneServicePort(sp *model.ServicePort) *model.ServicePort {
	c := *sp
	c.ExternalIPs = slices.Clone(sp.ExternalIPs)
	c.LoadBalancerVIPs = slices.Clone(sp.LoadBalancerVIPs)
	c.LoadBalancerSourceRanges = slices.Clone(sp.LoadBalancerSourceRanges)
	c.Endpoints = slices.Clone(sp.Endpoints)
	return &c
}
