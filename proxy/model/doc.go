// Package model converts Kubernetes Services and EndpointSlices into the
// proxy's view of the world: a sorted list of service ports, each carrying the
// endpoints that back it.
//
// It is the pure, shared front half of a proxier. The iptables renderer
// (proxy/iptables) and later the IPVS renderer both consume a *Snapshot and
// never look at API objects themselves.
//
// Upstream equivalents (k8s.io/kubernetes/pkg/proxy):
//
//   - ServicePortName          ↔ proxy.ServicePortName (types.go)
//   - ServicePort              ↔ proxy.BaseServicePortInfo (serviceport.go)
//   - Endpoint                 ↔ proxy.BaseEndpointInfo (endpoint.go)
//   - Tracker                  ↔ ServiceChangeTracker + EndpointsChangeTracker
//   - EndpointSliceCache (servicechangetracker.go,
//     endpointschangetracker.go, endpointslicecache.go): changes recorded
//     per service, applied at Snapshot time to the changed services only.
//   - Build                    ↔ the same from full lists (what a Tracker
//     fed every object gives; the property test holds them equal).
//   - CategorizeEndpoints      ↔ proxy.CategorizeEndpoints (topology.go),
//     without topology hints.
//
// Left out for now: topology-aware routing (zone/node hints and
// trafficDistribution), which upstream applies in CategorizeEndpoints. The
// Endpoint type and CategorizeEndpoints are where it would be added.
package model
