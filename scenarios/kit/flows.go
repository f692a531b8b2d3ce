package kit

import (
	"fmt"
	"net/netip"

	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/labs/agents/traffic"
)

// FlowsTo returns the conntrack entries whose original destination is dst
// and whose original source is one of the given client addresses.
func FlowsTo(flows []conntrack.Flow, dst netip.AddrPort, sources map[netip.AddrPort]bool) []conntrack.Flow {
	var out []conntrack.Flow
	for _, f := range flows {
		if f.Orig.Dst == dst && sources[f.Orig.Src] {
			out = append(out, f)
		}
	}
	return out
}

// ClientAddrs returns the client addresses of the connections that answered.
func ClientAddrs(res *traffic.Result) map[netip.AddrPort]bool {
	out := map[netip.AddrPort]bool{}
	for _, c := range res.Connections {
		if c.Backend != "" {
			out[netip.MustParseAddrPort(c.LocalAddress)] = true
		}
	}
	return out
}

// DescribeTraffic is a one-line summary of a traffic run for failure messages.
func DescribeTraffic(res *traffic.Result) string {
	return fmt.Sprintf("%d/%d succeeded, backends %v, failures %v", res.Succeeded, res.Attempted, res.Backends, res.Failures)
}
