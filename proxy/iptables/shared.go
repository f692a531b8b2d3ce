package iptables

import "bytes"

// A partial sync writes a service port's own nat chains only when they
// changed (chainsToWrite). The chains every service port adds rules to —
// the filter table's and nat's KUBE-SERVICES and KUBE-NODEPORTS — can only
// be written whole, and upstream writes them on every sync: at 10,000
// Services that is 10,000 lines of KUBE-SERVICES for a change of one
// endpoint, which iptables-nft turns into nftables expressions again (an
// `iptables-nft-restore --noflush` of one changed Service took 3.1 s with
// them and 0.08 s without, in a namespace holding a 10k×10 nat table). So a
// partial sync writes them only when they changed, and, as upstream's,
// when it has nothing else to write: the periodic sync (every syncPeriod
// while nothing changes) then still puts back a rule deleted from them
// behind the proxy's back. The kernel's tables end the same either way.

var (
	natTableLine = []byte("*nat\n")
	commitLine   = []byte("COMMIT\n")
)

// sharedToWrite tells whether the payload writes the filter table and
// nat's shared chains: on a full sync both; on a partial one each that
// differs from what was applied (sharedChanged), or both when neither
// does and no service port's own chains are written or deleted either.
func (r *Renderer) sharedToWrite(writeChains []bool, deleted []string, full bool) (filter, nat bool) {
	if full {
		return true, true
	}
	filter, nat = r.sharedChanged()
	if filter || nat || len(deleted) > 0 {
		return filter, nat
	}
	for _, w := range writeChains {
		if w {
			return false, false
		}
	}
	return true, true
}

// sharedChanged reports whether the rendered fragments' rules in the
// filter table and in nat's shared chains differ from the applied ones'.
// Both lists are sorted by name; a fragment kept from the last sync is the
// same pointer in both, so only added, removed and re-rendered service
// ports have their bytes compared.
func (r *Renderer) sharedChanged() (filter, nat bool) {
	i, j := 0, 0
	for (i < len(r.rendered) || j < len(r.applied)) && !(filter && nat) {
		var now, was *fragment
		switch {
		case j == len(r.applied):
			now, i = r.rendered[i], i+1
		case i == len(r.rendered):
			was, j = r.applied[j], j+1
		case r.rendered[i] == r.applied[j]:
			i, j = i+1, j+1
			continue
		default:
			c := r.rendered[i].sp.Name.Compare(r.applied[j].sp.Name)
			if c <= 0 {
				now, i = r.rendered[i], i+1
			}
			if c >= 0 {
				was, j = r.applied[j], j+1
			}
		}
		nowFilter, nowNAT := sharedRules(now)
		wasFilter, wasNAT := sharedRules(was)
		filter = filter || !bytes.Equal(nowFilter, wasFilter)
		nat = nat || !bytes.Equal(nowNAT, wasNAT)
	}
	return filter, nat
}

// sharedRules are f's rules in the filter table and in nat's shared
// chains; none for a service port that is not there (f nil).
func sharedRules(f *fragment) (filter, nat []byte) {
	if f == nil {
		return nil, nil
	}
	return f.filterRules(), f.natShared()
}
