package ipvs

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
)

// A partial sync of a patched Desired diffs only what changed. After a
// sync without error, what was written (written.go) is the previous
// Desired except for virtual servers ExcludeCIDRs keeps and destinations
// still draining: its ipsets and addresses are that Desired's, and every
// wanted virtual server has its real servers. So the full Diff would find
// differences only among what the patch touched and the virtual servers
// with a destination being drained; diffPartial looks at those alone and
// returns the same plan, op for op and in the same order (see the
// property test).

// draining are the virtual servers whose written destinations include
// one their Desired no longer wants (a TCP destination drained at weight
// 0 until its connections end): a partial sync looks at them every time.
type draining map[vsKey]struct{}

// candidates are the wanted virtual servers a partial sync looks at: those
// ch touched and those in dr, in Desired's order.
func (st *desiredState) candidates(ch *change, dr draining) []DesiredVirtualServer {
	var out []DesiredVirtualServer
	for k := range ch.vss {
		if claim, ok := st.vss[k]; ok {
			out = append(out, *claim.dvs)
		}
	}
	for k := range dr {
		if _, touched := ch.vss[k]; touched {
			continue
		}
		if claim, ok := st.vss[k]; ok {
			out = append(out, *claim.dvs)
		}
	}
	slices.SortFunc(out, compareVirtualServers)
	return out
}

// diffPartial is Diff(d, a, o) for the Desired d that st patched with ch
// from the one a was written for; cands are st.candidates. It appends the
// ops in Diff's order.
func (st *desiredState) diffPartial(d *Desired, a *Actual, o DiffOptions, ch *change, cands []DesiredVirtualServer) Plan {
	var p Plan
	p = appendSetUpOps(p, d, a)

	actual := a.index()
	for _, dvs := range cands {
		p = diffVirtualServer(p, dvs, a, actual)
	}

	addrs := slices.SortedFunc(maps.Keys(ch.addrs), netip.Addr.Compare)
	for _, addr := range addrs {
		if holds(d.Addresses, addr, netip.Addr.Compare) && !holds(a.Addresses, addr, netip.Addr.Compare) {
			p = append(p, Op{Kind: OpBindAddress, Addr: addr})
		}
	}

	for i, s := range d.Sets {
		touched := st.touchedEntries(ch, i, addrs)
		have := a.Sets[s.Name].Entries
		for _, e := range touched {
			if holds(have, e, cmp.Compare[string]) && !holds(s.Entries, e, cmp.Compare[string]) {
				p = append(p, Op{Kind: OpDelEntry, Set: s.Name, SetType: s.Type, Entry: e})
			}
		}
		for _, e := range touched {
			if holds(s.Entries, e, cmp.Compare[string]) && !holds(have, e, cmp.Compare[string]) {
				p = append(p, Op{Kind: OpAddEntry, Set: s.Name, SetType: s.Type, Entry: e})
			}
		}
	}

	p = appendIPTablesOps(p, d, o)

	for _, addr := range addrs {
		if holds(a.Addresses, addr, netip.Addr.Compare) && !holds(d.Addresses, addr, netip.Addr.Compare) {
			p = append(p, Op{Kind: OpUnbindAddress, Addr: addr})
		}
	}
	return st.deleteUnwanted(p, a, actual, o, ch)
}

// touchedEntries are the members of the set at index i that ch touched,
// sorted: for KUBE-IPVS-IPS, the touched addresses.
func (st *desiredState) touchedEntries(ch *change, i int, addrs []netip.Addr) []string {
	if i == setIndex[SetIPVSIPs] {
		out := make([]string, len(addrs))
		for j, a := range addrs {
			out[j] = a.String()
		}
		slices.Sort(out)
		return out
	}
	return slices.Sorted(maps.Keys(ch.entries[i]))
}

// deleteUnwanted appends the deletion of the virtual servers ch touched
// that no service port wants any more, in a's order as Diff does.
func (st *desiredState) deleteUnwanted(p Plan, a *Actual, actual map[vsKey]int, o DiffOptions, ch *change) Plan {
	var gone []int
	for k := range ch.vss {
		if _, wanted := st.vss[k]; wanted || excluded(k.addr, o.ExcludeCIDRs) {
			continue
		}
		if i, ok := actual[k]; ok {
			gone = append(gone, i)
		}
	}
	slices.Sort(gone)
	for _, i := range gone {
		p = append(p, Op{Kind: OpDeleteVirtualServer, VS: a.VirtualServers[i].VirtualServer})
	}
	return p
}

// holds reports whether the sorted list holds x.
func holds[T any](list []T, x T, compare func(a, b T) int) bool {
	_, found := slices.BinarySearchFunc(list, x, compare)
	return found
}

// update brings dr up to date with a after a sync recorded there: for
// every virtual server in dvss (all of Desired after a full diff, the
// candidates after a partial one), and forgetting those ch touched that
// are not wanted (ch nil: starting over).
func (dr draining) update(a *Actual, dvss []DesiredVirtualServer, ch *change) draining {
	if ch == nil || dr == nil {
		dr = draining{}
	} else {
		for k := range ch.vss {
			delete(dr, k)
		}
	}
	idx := a.index()
	for _, dvs := range dvss {
		k := keyOf(dvs.VirtualServer)
		if i, ok := idx[k]; ok && holdsUnwanted(a.VirtualServers[i].RealServers, dvs.RealServers) {
			dr[k] = struct{}{}
		} else {
			delete(dr, k)
		}
	}
	return dr
}
