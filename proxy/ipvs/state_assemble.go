package ipvs

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// listAll is Compute without keeping anything for a patch: the pieces'
// virtual servers (the first of each key wins), ipset members and
// addresses are gathered in lists, sorted and made unique.
func (st *desiredState) listAll(snap *model.Snapshot, s Settings) *Desired {
	*st = desiredState{s: s}
	st.c = newComputer(&st.s)
	d := &Desired{Family: s.Family, Jumps: jumpRules}
	entries := make([][]string, len(Sets))
	seen := map[vsKey]struct{}{}
	bound := map[netip.Addr]struct{}{}
	var refusals []kernel.Entry
	if snap != nil {
		p := &piece{} // one for all: what it holds is copied out
		for _, sp := range snap.ServicePorts {
			st.c.fill(p, sp)
			d.ServicePorts++
			d.Endpoints += len(sp.Endpoints)
			for _, dvs := range p.vss {
				k := keyOf(dvs.VirtualServer)
				if _, dup := seen[k]; !dup {
					seen[k] = struct{}{}
					d.VirtualServers = append(d.VirtualServers, dvs)
				}
			}
			for _, e := range p.entries {
				entries[e.set] = append(entries[e.set], e.entry)
			}
			for _, a := range p.binds {
				bound[a] = struct{}{}
			}
			refusals = append(refusals, p.noNodeAccess...)
		}
	}
	slices.SortFunc(d.VirtualServers, compareVirtualServers)
	d.Addresses = slices.SortedFunc(maps.Keys(bound), netip.Addr.Compare)
	for _, a := range d.Addresses {
		i := setIndex[SetIPVSIPs]
		entries[i] = append(entries[i], a.String())
	}
	d.Sets = make([]DesiredSet, len(Sets))
	for i, spec := range setsOf(s.Family) {
		slices.Sort(entries[i])
		d.Sets[i] = DesiredSet{SetSpec: spec, Entries: slices.Compact(entries[i])}
	}
	d.IPTables = renderRules(&st.s, d, refusals)
	st.d = d
	return d
}

// assembleAll makes the Desired of every counted piece; refusals are the
// pieces' noNodeAccess in snapshot order.
func (st *desiredState) assembleAll(refusals []kernel.Entry) *Desired {
	d := &Desired{Family: st.s.Family, ServicePorts: st.servicePorts, Endpoints: st.endpoints, Jumps: jumpRules}
	d.Addresses = slices.SortedFunc(maps.Keys(st.binds), netip.Addr.Compare)
	if len(st.vss) > 0 {
		d.VirtualServers = make([]DesiredVirtualServer, 0, len(st.vss))
	}
	for _, claim := range st.vss {
		d.VirtualServers = append(d.VirtualServers, *claim.dvs)
	}
	slices.SortFunc(d.VirtualServers, compareVirtualServers)
	d.Sets = make([]DesiredSet, len(Sets))
	for i, spec := range setsOf(st.s.Family) {
		d.Sets[i] = DesiredSet{SetSpec: spec, Entries: slices.Sorted(maps.Keys(st.entries[i]))}
	}
	ipvsIPs := &d.Sets[setIndex[SetIPVSIPs]]
	for _, a := range d.Addresses {
		ipvsIPs.Entries = append(ipvsIPs.Entries, a.String())
	}
	slices.Sort(ipvsIPs.Entries)
	d.IPTables = renderRules(&st.s, d, refusals)
	return d
}

// assemble makes the Desired of the counted pieces from the previous one,
// st.d, and what ch touched: the lists are copied with the touched items
// dropped or replaced, the rest shared (no list of a Desired is changed
// once made).
func (st *desiredState) assemble(ch *change) *Desired {
	old := st.d
	d := &Desired{Family: old.Family, ServicePorts: st.servicePorts, Endpoints: st.endpoints, Jumps: jumpRules,
		Addresses: old.Addresses, VirtualServers: old.VirtualServers, Sets: slices.Clone(old.Sets)}
	if len(ch.vss) > 0 {
		touched := make([]DesiredVirtualServer, 0, len(ch.vss))
		for k := range ch.vss {
			touched = append(touched, st.virtualServerOrKey(k))
		}
		slices.SortFunc(touched, compareVirtualServers)
		d.VirtualServers = patchSorted(old.VirtualServers, touched, compareVirtualServers, func(dvs DesiredVirtualServer) bool {
			_, ok := st.vss[keyOf(dvs.VirtualServer)]
			return ok
		})
	}
	if len(ch.addrs) > 0 {
		touched := slices.SortedFunc(maps.Keys(ch.addrs), netip.Addr.Compare)
		bound := func(a netip.Addr) bool { return st.binds[a] > 0 }
		d.Addresses = patchSorted(old.Addresses, touched, netip.Addr.Compare, bound)
		ipvsIPs := &d.Sets[setIndex[SetIPVSIPs]]
		names := make([]string, len(touched))
		for i, a := range touched {
			names[i] = a.String()
		}
		slices.Sort(names)
		ipvsIPs.Entries = patchSorted(ipvsIPs.Entries, names, cmp.Compare[string], func(e string) bool {
			return bound(netip.MustParseAddr(e))
		})
	}
	for i, touched := range ch.entries {
		if len(touched) == 0 {
			continue
		}
		counts := st.entries[i]
		d.Sets[i].Entries = patchSorted(d.Sets[i].Entries, slices.Sorted(maps.Keys(touched)), cmp.Compare[string], func(e string) bool {
			return counts[e] > 0
		})
	}
	d.IPTables = renderRules(&st.s, d, st.refusalsInOrder())
	return d
}

// virtualServerOrKey is the virtual server wanted at k, or one holding
// only k's address, protocol and port when none is.
func (st *desiredState) virtualServerOrKey(k vsKey) DesiredVirtualServer {
	if claim, ok := st.vss[k]; ok {
		return *claim.dvs
	}
	return DesiredVirtualServer{VirtualServer: kernel.VirtualServer{Address: k.addr, Protocol: k.proto, Port: k.port}}
}

// refusalsInOrder are the pieces' noNodeAccess in the order of their
// service ports (a snapshot's order, for a Tracker's snapshot).
func (st *desiredState) refusalsInOrder() []kernel.Entry {
	names := slices.SortedFunc(maps.Keys(st.refusals), model.ServicePortName.Compare)
	var out []kernel.Entry
	for _, n := range names {
		out = append(out, st.refusals[n]...)
	}
	return out
}

// patchSorted returns list (sorted by compare, each item once) with every
// item of touched (sorted, each once) dropped, and put back, in its new
// form, where wanted says so. Runs of list between touched items are
// copied whole. An empty result is nil, as Compute leaves an empty set.
func patchSorted[T any](list, touched []T, compare func(a, b T) int, wanted func(T) bool) []T {
	out := make([]T, 0, len(list)+len(touched))
	i := 0
	for _, t := range touched {
		n, found := slices.BinarySearchFunc(list[i:], t, compare)
		out = append(out, list[i:i+n]...)
		i += n
		if found {
			i++
		}
		if wanted(t) {
			out = append(out, t)
		}
	}
	out = append(out, list[i:]...)
	if len(out) == 0 {
		return nil
	}
	return out
}
