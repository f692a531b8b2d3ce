package ipvs

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// DiffOptions tune Diff.
type DiffOptions struct {
	// ExcludeCIDRs are ipvs.excludeCIDRs: IPVS services with an address
	// inside them are never deleted (they belong to someone else).
	ExcludeCIDRs []netip.Prefix
	// AppliedIPTables is the payload the kernel is known to hold (the last
	// one restored without error). When the desired payload equals it, no
	// restore is planned; when it is nil (first sync, or after an error)
	// the plan ensures the jump rules and restores.
	AppliedIPTables []byte
}

// Diff returns the ops that turn a into d, touching only what differs. The
// plan's order is upstream's sync order: the dummy device and the ipsets
// first, then the virtual servers with their real servers and addresses,
// the ipset members, the iptables payload that matches them, and last the
// removal of addresses and virtual servers no service wants.
//
// Real servers no longer wanted are drained as upstream's
// GracefulTerminationManager does: a TCP real server with connections is
// set to weight 0 and deleted on a later sync, once its active and
// inactive connection counts reach 0; a UDP or SCTP one, or one without
// connections, is deleted at once (net.ipv4.vs.expire_nodest_conn=1 ends
// its flows at their next packet). A weight-0 real server that is wanted
// again gets weight 1 back. Unlike upstream, Diff keeps no list of
// draining servers: weight 0 on an unwanted real server is the record,
// so draining survives a restart.
func Diff(d *Desired, a *Actual, o DiffOptions) Plan {
	var p Plan
	if len(a.VirtualServers) == 0 && len(a.Addresses) == 0 {
		// A first sync creates everything: size the plan once.
		n := len(d.Addresses) + len(d.Sets) + len(d.Jumps) + 2
		for _, vs := range d.VirtualServers {
			n += 1 + len(vs.RealServers)
		}
		for _, s := range d.Sets {
			n += len(s.Entries)
		}
		p = make(Plan, 0, n)
	}
	p = appendSetUpOps(p, d, a)

	actual := a.index()
	wanted := make(map[vsKey]bool, len(d.VirtualServers))
	for _, dvs := range d.VirtualServers {
		wanted[keyOf(dvs.VirtualServer)] = true
		p = diffVirtualServer(p, dvs, a, actual)
	}

	for _, addr := range d.Addresses {
		if _, found := slices.BinarySearchFunc(a.Addresses, addr, netip.Addr.Compare); !found {
			p = append(p, Op{Kind: OpBindAddress, Addr: addr})
		}
	}

	for _, s := range d.Sets {
		have := a.Sets[s.Name].Entries
		gone, added := diffSorted(have, s.Entries)
		for _, e := range gone {
			p = append(p, Op{Kind: OpDelEntry, Set: s.Name, SetType: s.Type, Entry: e})
		}
		for _, e := range added {
			p = append(p, Op{Kind: OpAddEntry, Set: s.Name, SetType: s.Type, Entry: e})
		}
	}

	p = appendIPTablesOps(p, d, o)

	for _, addr := range a.Addresses {
		if _, found := slices.BinarySearchFunc(d.Addresses, addr, netip.Addr.Compare); !found {
			p = append(p, Op{Kind: OpUnbindAddress, Addr: addr})
		}
	}
	for _, avs := range a.VirtualServers {
		if wanted[keyOf(avs.VirtualServer)] || excluded(avs.Address, o.ExcludeCIDRs) {
			continue
		}
		p = append(p, Op{Kind: OpDeleteVirtualServer, VS: avs.VirtualServer})
	}
	return p
}

// diffVirtualServer appends the ops that make the virtual server of dvs
// in a, indexed by actual, what dvs asks for.
func diffVirtualServer(p Plan, dvs DesiredVirtualServer, a *Actual, actual map[vsKey]int) Plan {
	var avs *ActualVirtualServer
	if i, ok := actual[keyOf(dvs.VirtualServer)]; ok {
		avs = &a.VirtualServers[i]
	}
	switch {
	case avs == nil:
		p = append(p, Op{Kind: OpAddVirtualServer, VS: dvs.VirtualServer})
	case avs.Scheduler != dvs.Scheduler || avs.Flags != dvs.Flags || avs.Timeout != dvs.Timeout:
		p = append(p, Op{Kind: OpUpdateVirtualServer, VS: dvs.VirtualServer})
	}
	var have []kernel.RealServer
	if avs != nil {
		have = avs.RealServers
	}
	return diffRealServers(p, dvs.VirtualServer, dvs.RealServers, have)
}

// diffRealServers appends the ops that give vs the real servers want.
// Upstream: syncEndpoint and GracefulTerminationManager.
func diffRealServers(p Plan, vs kernel.VirtualServer, want, have []kernel.RealServer) Plan {
	if slices.EqualFunc(want, have, sameKeyAndWeight) {
		return p // the common case, in the order they were added: no search
	}
	for _, rs := range want {
		i := slices.IndexFunc(have, rs.SameKey)
		switch {
		case i < 0:
			p = append(p, Op{Kind: OpAddRealServer, VS: vs, RS: rs})
		case have[i].Weight != rs.Weight:
			p = append(p, Op{Kind: OpUpdateRealServer, VS: vs, RS: rs})
		}
	}
	for _, rs := range have {
		if slices.ContainsFunc(want, rs.SameKey) {
			continue
		}
		conns := rs.ActiveConn + rs.InactiveConn
		if !gracefulTerminationNeeded(vs.Protocol) || conns == 0 {
			p = append(p, Op{Kind: OpDeleteRealServer, VS: vs, RS: rs})
			continue
		}
		if rs.Weight != 0 {
			drained := rs
			drained.Weight = 0
			p = append(p, Op{Kind: OpUpdateRealServer, VS: vs, RS: drained,
				Why: fmt.Sprintf("draining: %d active, %d inactive connections", rs.ActiveConn, rs.InactiveConn)})
		}
	}
	return p
}

func sameKeyAndWeight(a, b kernel.RealServer) bool { return a.SameKey(b) && a.Weight == b.Weight }

// gracefulTerminationNeeded is upstream's IsRsGracefulTerminationNeeded:
// only TCP connections are waited for.
func gracefulTerminationNeeded(p kernel.Protocol) bool {
	return p != kernel.UDP && p != kernel.SCTP
}

func excluded(a netip.Addr, cidrs []netip.Prefix) bool {
	for _, c := range cidrs {
		if c.Contains(a) {
			return true
		}
	}
	return false
}

// diffSorted compares two sorted lists: what only have holds, and what
// only want holds.
func diffSorted(have, want []string) (gone, added []string) {
	i, j := 0, 0
	for i < len(have) || j < len(want) {
		switch {
		case j >= len(want) || (i < len(have) && have[i] < want[j]):
			gone = append(gone, have[i])
			i++
		case i >= len(have) || want[j] < have[i]:
			added = append(added, want[j])
			j++
		default:
			i++
			j++
		}
	}
	return gone, added
}

// appendIPTablesOps appends the iptables side of a plan: the jumps into
// svclab's chains when what was applied is unknown, and the restore when
// the rules differ from what was applied.
func appendIPTablesOps(p Plan, d *Desired, o DiffOptions) Plan {
	if o.AppliedIPTables == nil {
		for _, j := range d.Jumps {
			p = append(p, Op{Kind: OpEnsureJump, Jump: j, Family: d.Family})
		}
	}
	if o.AppliedIPTables == nil || !bytes.Equal(o.AppliedIPTables, d.IPTables) {
		p = append(p, Op{Kind: OpRestore, Payload: d.IPTables, Family: d.Family})
	}
	return p
}

// appendSetUpOps appends what a plan first makes when missing: the dummy
// device the service addresses are bound to, and each ipset of d.
func appendSetUpOps(p Plan, d *Desired, a *Actual) Plan {
	if !a.DummyExists {
		p = append(p, Op{Kind: OpCreateDummy})
	}
	for _, s := range d.Sets {
		if _, ok := a.Sets[s.Name]; !ok {
			p = append(p, Op{Kind: OpCreateSet, Set: s.Name, SetType: s.Type, Family: d.Family})
		}
	}
	return p
}
