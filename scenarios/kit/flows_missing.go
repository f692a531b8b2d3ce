package kit

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/svclab/svclab/labs/agents/conntrack"
)

// MissingFlows returns the client addresses (sorted) that have no conntrack
// entry to dst among flows.
func MissingFlows(flows []conntrack.Flow, dst netip.AddrPort, sources map[netip.AddrPort]bool) []netip.AddrPort {
	seen := map[netip.AddrPort]bool{}
	for _, f := range FlowsTo(flows, dst, sources) {
		seen[f.Orig.Src] = true
	}
	var out []netip.AddrPort
	for a := range sources {
		if !seen[a] {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b netip.AddrPort) int { return a.Compare(b) })
	return out
}

// DescribeMissingFlows says, for each client address without an entry,
// which entries of flows mention its port at all (either tuple), so that a
// failure shows whether the entry is gone or recorded under another tuple.
func DescribeMissingFlows(flows []conntrack.Flow, missing []netip.AddrPort) string {
	var b strings.Builder
	for _, a := range missing {
		fmt.Fprintf(&b, "\n  %s:", a)
		found := false
		for _, f := range flows {
			if f.Orig.Src.Port() == a.Port() || f.Reply.Dst.Port() == a.Port() || f.Orig.Dst.Port() == a.Port() || f.Reply.Src.Port() == a.Port() {
				fmt.Fprintf(&b, "\n    %s", f)
				found = true
			}
		}
		if !found {
			b.WriteString(" no entry mentions its port")
		}
	}
	return b.String()
}
