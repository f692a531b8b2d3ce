package conformance

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/scenarios/kit"
)

// trackedFlows are a node's conntrack entries with original destination
// dst from the given client addresses. A netlink dump walks the hash
// table while it changes (a busy node tracks kubelet probes, DNS, the
// API server), and may then skip an entry; entries live on for minutes
// after their connection (TIME_WAIT), so the dump is repeated, up to 5
// times half a second apart, and the union kept, until every client
// address is found.
func trackedFlows(ctx context.Context, ws kit.Workspace, node string, dst netip.AddrPort, sources map[netip.AddrPort]bool) []conntrack.Flow {
	GinkgoHelper()
	found := map[netip.AddrPort]conntrack.Flow{}
	var last []conntrack.Flow
	attempt := 0
	for ; attempt < 5 && len(found) < len(sources); attempt++ {
		if attempt > 0 {
			time.Sleep(500 * time.Millisecond)
		}
		flows, err := ws.Conntrack(ctx, node)
		Expect(err).NotTo(HaveOccurred())
		last = flows
		for _, f := range kit.FlowsTo(flows, dst, sources) {
			if _, ok := found[f.Orig.Src]; !ok {
				found[f.Orig.Src] = f
			}
		}
	}
	if attempt > 1 {
		By(fmt.Sprintf("conntrack on %s: %d dumps to find %d of %d entries", node, attempt, len(found), len(sources)))
	}
	if len(found) < len(sources) {
		// Say what the table holds for the first missing clients.
		shown := 0
		for src := range sources {
			if _, ok := found[src]; ok || shown == 3 {
				continue
			}
			shown++
			var related []string
			for _, f := range last {
				if f.Orig.Src == src || f.Reply.Dst == src {
					related = append(related, f.String())
				}
			}
			By(fmt.Sprintf("conntrack on %s: no entry %s → %s; entries of that client address: %v", node, src, dst, related))
		}
	}
	out := make([]conntrack.Flow, 0, len(found))
	for _, f := range found {
		out = append(out, f)
	}
	return out
}
