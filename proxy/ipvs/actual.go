package ipvs

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// Actual is what the kernel holds, as far as the IPVS proxier of one IP
// family is concerned: the other family's addresses, sets and services
// are the other proxier's.
type Actual struct {
	// DummyExists says whether kube-ipvs0 exists; Addresses are its
	// addresses of the family.
	DummyExists bool
	Addresses   []netip.Addr
	// Sets are the family's ipsets of the mode that exist, by name (other
	// sets are not read).
	Sets map[string]ActualSet
	// VirtualServers are every IPVS service of the family, with its
	// destinations, in no particular order.
	VirtualServers []ActualVirtualServer

	// byKey indexes VirtualServers; ReadActual builds it and record keeps
	// it current. An Actual built as a literal has none, and Diff indexes
	// it for itself.
	byKey map[vsKey]int
}

// vsKey is what tells two virtual servers apart (VirtualServer.SameKey).
type vsKey struct {
	addr  netip.Addr
	port  uint16
	proto kernel.Protocol
}

func keyOf(vs kernel.VirtualServer) vsKey { return vsKey{vs.Address, vs.Port, vs.Protocol} }

// index returns byKey, or a fresh index when a has none.
func (a *Actual) index() map[vsKey]int {
	if a.byKey != nil {
		return a.byKey
	}
	idx := make(map[vsKey]int, len(a.VirtualServers))
	for i, avs := range a.VirtualServers {
		idx[keyOf(avs.VirtualServer)] = i
	}
	return idx
}

// ActualSet is an existing ipset.
type ActualSet struct {
	Type    kernel.SetType
	Entries []string
}

// ActualVirtualServer is an existing IPVS service.
type ActualVirtualServer struct {
	kernel.VirtualServer
	RealServers []kernel.RealServer
}

// ReadActual reads the kernel state Diff compares against: kube-ipvs0, the
// mode's ipsets, and every IPVS service with its destinations (upstream
// reads the same in each sync: GetLocalAddresses, ListEntries,
// GetVirtualServers and GetRealServers). The Backend reads it only on a
// full sync, and keeps it up to date from what it applies in between
// (written.go). It reads the IPv4 proxier's state; ReadActualOf reads
// either family's.
func ReadActual(k kernel.Interface) (*Actual, error) {
	return ReadActualOf(k, corev1.IPv4Protocol)
}

// ReadActualOf is ReadActual for the proxier of family: kube-ipvs0's
// addresses, the sets (KUBE-6-* for IPv6) and the IPVS services of that
// family only, as upstream's proxier of each family reads its own
// (netlinkHandle.isValidForSet, cleanLegacyService's getIPFamily).
func ReadActualOf(k kernel.Interface, family corev1.IPFamily) (*Actual, error) {
	a := &Actual{Sets: map[string]ActualSet{}}
	addrs, exists, err := k.Addresses(DummyDevice)
	if err != nil {
		return nil, err
	}
	a.DummyExists, a.Addresses = exists, ofFamily(family, addrs)
	for _, spec := range setsOf(family) {
		typ, entries, exists, err := k.Entries(spec.Name)
		if err != nil {
			return nil, err
		}
		if exists {
			a.Sets[spec.Name] = ActualSet{Type: typ, Entries: entries}
		}
	}
	vss, err := k.VirtualServers()
	if err != nil {
		return nil, err
	}
	a.VirtualServers = make([]ActualVirtualServer, 0, len(vss))
	for _, vs := range vss {
		if !inFamily(family, vs.Address) {
			continue
		}
		rss, err := k.RealServers(vs)
		if err != nil {
			return nil, fmt.Errorf("real servers of %s: %w", vs.Key(), err)
		}
		a.VirtualServers = append(a.VirtualServers, ActualVirtualServer{VirtualServer: vs, RealServers: rss})
	}
	a.byKey = a.index()
	return a, nil
}
