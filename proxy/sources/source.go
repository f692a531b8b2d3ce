package sources

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Objects is what one sync reads from a source.
type Objects struct {
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	// Generation is the lab store's generation the objects belong to (0 for
	// a cluster source); the proxy reports it so the lab knows a change is live.
	Generation int64
}

// Source is where the proxy learns about Services and EndpointSlices.
type Source interface {
	// Run watches until ctx ends and calls changed after every change. It
	// returns once the source is ready to List (or fails), leaving the watch
	// running in the background.
	Run(ctx context.Context, changed func()) error
	// List returns the current objects.
	List() (*Objects, error)
}
