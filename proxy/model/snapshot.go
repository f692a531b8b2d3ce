package model

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Snapshot is the proxy's complete view at one moment: every proxied service
// port of one IP family with its endpoints.
type Snapshot struct {
	// NodeName is the node the snapshot was built for; endpoints on it are
	// local.
	NodeName string
	// Family is the IP family of every address in the snapshot.
	Family corev1.IPFamily
	// ServicePorts is sorted by ServicePortName.Compare and holds each name
	// once.
	ServicePorts []*ServicePort
	// StablePointers is Tracker.Snapshot's promise, false for a snapshot
	// built any other way: a *ServicePort found in an earlier snapshot of
	// the same Tracker has not changed since (a changed service port is a
	// new pointer), and no one changes it afterwards. A renderer may then
	// reuse, by pointer, what it derived from a service port before;
	// without the promise it must compare contents (a hand-built snapshot
	// may edit a service port in place).
	StablePointers bool
}

// Lookup returns the service port with the given name, or nil.
func (s *Snapshot) Lookup(name ServicePortName) *ServicePort {
	i, found := slices.BinarySearchFunc(s.ServicePorts, name, func(sp *ServicePort, n ServicePortName) int {
		return sp.Name.Compare(n)
	})
	if !found {
		return nil
	}
	return s.ServicePorts[i]
}

// EndpointCount is the total number of endpoints over all service ports.
func (s *Snapshot) EndpointCount() int {
	n := 0
	for _, sp := range s.ServicePorts {
		n += len(sp.Endpoints)
	}
	return n
}

// SortServicePorts sorts ServicePorts by name. Build already returns them
// sorted; call this after editing the slice by hand.
func (s *Snapshot) SortServicePorts() {
	slices.SortFunc(s.ServicePorts, func(a, b *ServicePort) int { return a.Name.Compare(b.Name) })
}
