package ipvs

import (
	"net/netip"
	"reflect"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// desiredState is Compute kept between syncs: the piece of every service
// port, and how many pieces ask for each virtual server, ipset member and
// address. A partial sync whose snapshot keeps the pointers of unchanged
// service ports (model.Snapshot.StablePointers) recomputes only the pieces
// of the service ports that are new, changed or gone, and patches the
// sorted lists of the previous Desired with what those pieces changed; the
// result is byte for byte what Compute returns (see the property test).
//
// Everything else computes it all again: other settings or node addresses,
// a snapshot without the promise (then the next one does too), two service
// ports claiming one virtual server (the first in the snapshot wins, which
// only a full walk knows), and reset, which a full sync and any error call.
type desiredState struct {
	c *computer
	s Settings
	// stable says the service ports of prev keep the Tracker's promise.
	stable bool
	prev   []*model.ServicePort
	pieces map[model.ServicePortName]*piece

	vss map[vsKey]vsClaim
	// shadowed counts the virtual servers a second service port claims.
	shadowed int
	// entries counts, per Sets index, the pieces asking for each member.
	entries []map[string]int
	binds   map[netip.Addr]int
	// refusals are the pieces' noNodeAccess, by service port.
	refusals map[model.ServicePortName][]kernel.Entry

	servicePorts, endpoints int
	// d is the Desired of prev; nil when there is none to start from.
	d *Desired
}

// vsClaim is a virtual server and how many pieces ask for it.
type vsClaim struct {
	claims int
	dvs    *DesiredVirtualServer
}

// change is what one update touched: the virtual servers, ipset members
// and addresses some piece stopped or started asking for. Whether each is
// wanted now is in the state.
type change struct {
	vss      map[vsKey]struct{}
	entries  []map[string]struct{}
	addrs    map[netip.Addr]struct{}
	refusals bool
	// collided says a piece claimed a virtual server another one has.
	collided bool
}

// reset forgets everything: the next update computes in full.
func (st *desiredState) reset() { *st = desiredState{} }

// patchable says the next update may patch: the state is of a snapshot
// with StablePointers, and no virtual server is claimed twice.
func (st *desiredState) patchable() bool { return st.d != nil && st.stable && st.shadowed == 0 }

// update returns the Desired for snap with settings s, and what changed
// since the previous one. When patching is allowed, the previous Desired
// was of the same settings and a snapshot keeping the Tracker's promise as
// snap does, it patches; otherwise it computes in full and the change is
// nil.
func (st *desiredState) update(snap *model.Snapshot, s Settings, patch bool) (*Desired, *change) {
	if patch && st.patchable() && snap.StablePointers && reflect.DeepEqual(st.s, s) {
		if ch, ok := st.patch(snap); ok {
			d := st.assemble(ch)
			st.d, st.prev = d, snap.ServicePorts
			return d, ch
		}
	}
	return st.computeAll(snap, s), nil
}

// computeAll starts over from snap. For a snapshot with StablePointers
// every service port's piece is kept and counted, for the next update to
// patch; any other is computed as a list (listAll), faster, and the next
// update computes in full again.
func (st *desiredState) computeAll(snap *model.Snapshot, s Settings) *Desired {
	if snap == nil || !snap.StablePointers {
		return st.listAll(snap, s)
	}
	*st = desiredState{s: s}
	st.c = newComputer(&st.s)
	// Sized for a service port with one virtual server, cluster IP and
	// local endpoint each, as most have: growing maps of 10,000 entries
	// step by step costs more than filling them.
	n := len(snap.ServicePorts)
	st.pieces = make(map[model.ServicePortName]*piece, n)
	st.vss = make(map[vsKey]vsClaim, n)
	st.entries = make([]map[string]int, len(Sets))
	for i := range st.entries {
		st.entries[i] = map[string]int{}
	}
	st.entries[setIndex[SetClusterIP]] = make(map[string]int, n)
	st.entries[setIndex[SetLoopBack]] = make(map[string]int, n)
	st.binds = make(map[netip.Addr]int, n)
	st.refusals = map[model.ServicePortName][]kernel.Entry{}
	var refusals []kernel.Entry
	st.stable, st.prev = true, snap.ServicePorts
	for _, sp := range snap.ServicePorts {
		p := st.add(sp, nil)
		refusals = append(refusals, p.noNodeAccess...)
	}
	st.d = st.assembleAll(refusals)
	return st.d
}

// patch walks the previous and the new service ports side by side (both
// sorted by name) and swaps the pieces of those whose pointer differs. It
// fails when two pieces claim one virtual server.
func (st *desiredState) patch(snap *model.Snapshot) (*change, bool) {
	ch := &change{vss: map[vsKey]struct{}{}, entries: make([]map[string]struct{}, len(Sets)), addrs: map[netip.Addr]struct{}{}}
	prev, cur := st.prev, snap.ServicePorts
	i, j := 0, 0
	for i < len(prev) || j < len(cur) {
		switch {
		case i < len(prev) && j < len(cur) && prev[i] == cur[j]:
			i, j = i+1, j+1
		case j == len(cur) || (i < len(prev) && prev[i].Name.Compare(cur[j].Name) < 0):
			st.remove(prev[i].Name, ch)
			i++
		case i == len(prev) || prev[i].Name.Compare(cur[j].Name) > 0:
			st.add(cur[j], ch)
			j++
		default: // the same name, changed
			st.remove(prev[i].Name, ch)
			st.add(cur[j], ch)
			i, j = i+1, j+1
		}
	}
	return ch, !ch.collided && st.shadowed == 0
}

// add computes sp's piece and counts what it asks for; ch, when not nil,
// collects what that touches.
func (st *desiredState) add(sp *model.ServicePort, ch *change) *piece {
	p := st.c.piece(sp)
	st.pieces[sp.Name] = p
	st.servicePorts++
	st.endpoints += len(sp.Endpoints)
	for i := range p.vss {
		k := keyOf(p.vss[i].VirtualServer)
		if claim, ok := st.vss[k]; ok {
			claim.claims++
			st.vss[k] = claim
			st.shadowed++
			if ch != nil {
				ch.collided = true
			}
		} else {
			st.vss[k] = vsClaim{claims: 1, dvs: &p.vss[i]}
		}
		ch.touchVS(k)
	}
	for _, e := range p.entries {
		st.entries[e.set][e.entry]++
		ch.touchEntry(e)
	}
	for _, a := range p.binds {
		st.binds[a]++
		ch.touchAddr(a)
	}
	if len(p.noNodeAccess) > 0 {
		st.refusals[sp.Name] = p.noNodeAccess
		if ch != nil {
			ch.refusals = true
		}
	}
	return p
}

// remove uncounts the piece of the service port name.
func (st *desiredState) remove(name model.ServicePortName, ch *change) {
	p := st.pieces[name]
	delete(st.pieces, name)
	st.servicePorts--
	st.endpoints -= len(p.sp.Endpoints)
	for i := range p.vss {
		k := keyOf(p.vss[i].VirtualServer)
		if claim := st.vss[k]; claim.claims > 1 {
			claim.claims--
			st.vss[k] = claim
			st.shadowed--
		} else {
			delete(st.vss, k)
		}
		ch.touchVS(k)
	}
	for _, e := range p.entries {
		m := st.entries[e.set]
		if m[e.entry]--; m[e.entry] == 0 {
			delete(m, e.entry)
		}
		ch.touchEntry(e)
	}
	for _, a := range p.binds {
		if st.binds[a]--; st.binds[a] == 0 {
			delete(st.binds, a)
		}
		ch.touchAddr(a)
	}
	if len(p.noNodeAccess) > 0 {
		delete(st.refusals, name)
		ch.refusals = true
	}
}

func (ch *change) touchVS(k vsKey) {
	if ch != nil {
		ch.vss[k] = struct{}{}
	}
}

func (ch *change) touchEntry(e setEntry) {
	if ch == nil {
		return
	}
	if ch.entries[e.set] == nil {
		ch.entries[e.set] = map[string]struct{}{}
	}
	ch.entries[e.set][e.entry] = struct{}{}
}

func (ch *change) touchAddr(a netip.Addr) {
	if ch != nil {
		ch.addrs[a] = struct{}{}
	}
}
