// Package sources feeds the proxy's sync loop with Services and
// EndpointSlices: from a lab's object store (a directory of manifests the lab
// writes atomically) or from a real cluster through client-go informers.
// Both satisfy the same Source interface, so one loop serves both.
package sources
