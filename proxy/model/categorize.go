package model

import "slices"

// CategorizeEndpoints splits a service port's endpoints the way upstream
// proxy.CategorizeEndpoints (pkg/proxy/topology.go) does, without topology
// hints:
//
//   - cluster: the endpoints used under the "Cluster" traffic policy: the
//     ready ones, or, when none is ready, the serving-and-terminating ones.
//     nil when the port never uses the Cluster policy.
//   - local: the endpoints used under the "Local" policy: this node's ready
//     ones, or, when none is ready, this node's serving-and-terminating ones.
//     nil when the port never uses the Local policy.
//   - reachable: every endpoint this node may send to (the union of the two),
//     sorted by "IP:port".
//   - hasAny: whether the port has usable endpoints anywhere in the cluster,
//     even if none is reachable from this node.
//
// The returned slices may share storage with sp.Endpoints (when every
// endpoint qualifies): do not modify them.
func CategorizeEndpoints(sp *ServicePort) (cluster, local, reachable []Endpoint, hasAny bool) {
	if len(sp.Endpoints) == 0 {
		return nil, nil, nil, false
	}

	if sp.UsesClusterEndpoints() {
		cluster = filterEndpoints(sp.Endpoints, func(ep Endpoint) bool { return ep.Ready })
		if len(cluster) == 0 {
			cluster = filterEndpoints(sp.Endpoints, func(ep Endpoint) bool { return ep.Serving && ep.Terminating })
		}
		hasAny = len(cluster) > 0
	}

	if !sp.UsesLocalEndpoints() {
		return cluster, nil, cluster, hasAny
	}

	var localReady, localServingTerminating bool
	for _, ep := range sp.Endpoints {
		if ep.Ready {
			hasAny = true
			localReady = localReady || ep.IsLocal
		} else if ep.Serving && ep.Terminating {
			hasAny = true
			localServingTerminating = localServingTerminating || ep.IsLocal
		}
	}
	usesTerminating := false
	switch {
	case localReady:
		local = filterEndpoints(sp.Endpoints, func(ep Endpoint) bool { return ep.IsLocal && ep.Ready })
	case localServingTerminating:
		usesTerminating = true
		local = filterEndpoints(sp.Endpoints, func(ep Endpoint) bool { return ep.IsLocal && ep.Serving && ep.Terminating })
	}

	if !sp.UsesClusterEndpoints() {
		return nil, local, local, hasAny
	}
	if !usesTerminating {
		// local holds only ready endpoints, all of which are in cluster.
		return cluster, local, cluster, hasAny
	}
	// local holds terminating endpoints that cluster lacks: merge.
	reachable = append(slices.Clone(cluster), local...)
	sortEndpoints(reachable)
	reachable = slices.CompactFunc(reachable, func(a, b Endpoint) bool { return a.IP == b.IP && a.Port == b.Port })
	return cluster, local, reachable, hasAny
}

// filterEndpoints returns the endpoints keep accepts: eps itself when it
// accepts them all (the common case, which then costs no allocation).
func filterEndpoints(eps []Endpoint, keep func(Endpoint) bool) []Endpoint {
	for i, ep := range eps {
		if keep(ep) {
			continue
		}
		out := make([]Endpoint, i, len(eps))
		copy(out, eps[:i])
		for _, ep := range eps[i+1:] {
			if keep(ep) {
				out = append(out, ep)
			}
		}
		return out
	}
	return eps
}
