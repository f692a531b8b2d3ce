package ipvs

import (
	"fmt"
	"slices"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// What the Backend wrote: between full syncs, the Actual that the last
// full sync read is kept up to date with every op applied since, and the
// next sync diffs against it instead of reading the kernel again. The
// kernel is read in full only on a full sync: the first, one the loop
// asks for (ForceFullSync, every FullSyncPeriod), and the one after any
// error, which drops the record. Someone else's change to the kernel
// (ipvsadm -d by hand) is therefore put right by the next full sync,
// not the next sync.

// record brings a, the state Diff compared against, up to date with p,
// a plan for d that Apply carried out without error. The virtual and real
// servers follow the ops one by one, so a sync that changed one
// destination costs one change here; the dummy device, its addresses and
// the ipsets are exactly what d asked for once every op of p succeeded
// (Diff binds and unbinds, adds and deletes until they match), so they
// are taken from d whole. d must not change afterwards.
func (a *Actual) record(p Plan, d *Desired) {
	if a.byKey == nil {
		a.byKey = a.index()
	}
	for _, op := range p {
		a.recordOp(op)
	}
	a.DummyExists = true
	a.Addresses = d.Addresses
	for _, s := range d.Sets {
		a.Sets[s.Name] = ActualSet{Type: s.Type, Entries: s.Entries}
	}
}

// recordOp applies one virtual or real server op to a; other kinds are
// recorded whole by record.
func (a *Actual) recordOp(op Op) {
	key := keyOf(op.VS)
	i, exists := a.byKey[key]
	switch op.Kind {
	case OpAddVirtualServer:
		a.byKey[key] = len(a.VirtualServers)
		a.VirtualServers = append(a.VirtualServers, ActualVirtualServer{VirtualServer: op.VS})
	case OpUpdateVirtualServer:
		if exists {
			a.VirtualServers[i].VirtualServer = op.VS
		}
	case OpDeleteVirtualServer:
		if exists {
			a.deleteVirtualServer(i)
		}
	case OpAddRealServer:
		if exists {
			rs := op.RS
			rs.ActiveConn, rs.InactiveConn = 0, 0
			a.VirtualServers[i].RealServers = append(a.VirtualServers[i].RealServers, rs)
		}
	case OpUpdateRealServer:
		if exists {
			rss := a.VirtualServers[i].RealServers
			if j := slices.IndexFunc(rss, op.RS.SameKey); j >= 0 {
				rss[j].Weight = op.RS.Weight
			}
		}
	case OpDeleteRealServer:
		if exists {
			avs := &a.VirtualServers[i]
			avs.RealServers = slices.DeleteFunc(avs.RealServers, op.RS.SameKey)
		}
	}
}

// deleteVirtualServer removes the i-th virtual server by moving the last
// one into its place (the order means nothing: it is the kernel's).
func (a *Actual) deleteVirtualServer(i int) {
	last := len(a.VirtualServers) - 1
	delete(a.byKey, keyOf(a.VirtualServers[i].VirtualServer))
	if i != last {
		a.VirtualServers[i] = a.VirtualServers[last]
		a.byKey[keyOf(a.VirtualServers[i].VirtualServer)] = i
	}
	a.VirtualServers[last] = ActualVirtualServer{}
	a.VirtualServers = a.VirtualServers[:last]
}

// refreshDraining re-reads, from the kernel, the destinations of each
// virtual server that holds a destination d no longer wants and that is
// drained before it goes (TCP): whether it is deleted now or set to weight
// 0 and kept depends on its connection counts, which only the kernel
// knows. Those are the virtual servers with a destination being drained
// and those losing one in this sync — as upstream's
// GracefulTerminationManager reads (GetRealServers) only the virtual
// servers of the destinations on its list, and the one of a destination
// it is about to delete.
func (a *Actual) refreshDraining(k kernel.IPVS, d *Desired) error {
	return a.refreshDrainingOf(k, d.VirtualServers)
}

// refreshDrainingOf is refreshDraining looking only at the virtual servers
// dvss: a partial sync's candidates (diffPartial).
func (a *Actual) refreshDrainingOf(k kernel.IPVS, dvss []DesiredVirtualServer) error {
	idx := a.index()
	for _, dvs := range dvss {
		if !gracefulTerminationNeeded(dvs.Protocol) {
			continue
		}
		i, ok := idx[keyOf(dvs.VirtualServer)]
		if !ok || !holdsUnwanted(a.VirtualServers[i].RealServers, dvs.RealServers) {
			continue
		}
		avs := &a.VirtualServers[i]
		rss, err := k.RealServers(avs.VirtualServer)
		if err != nil {
			return fmt.Errorf("real servers of %s: %w", avs.Key(), err)
		}
		avs.RealServers = rss
	}
	return nil
}

// holdsUnwanted reports whether have has a destination want lacks.
func holdsUnwanted(have, want []kernel.RealServer) bool {
	if slices.EqualFunc(have, want, kernel.RealServer.SameKey) {
		return false // the common case: no search
	}
	for _, rs := range have {
		if !slices.ContainsFunc(want, rs.SameKey) {
			return true
		}
	}
	return false
}
