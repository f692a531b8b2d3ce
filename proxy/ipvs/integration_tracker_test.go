package ipvs

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/model"
)

// TestIntegrationTrackerSync checks the syncs a Tracker's snapshots get
// against a real kernel: desired state patched per changed service port
// (state.go) and diffed only where it changed (diff_partial.go). After
// each of 12 random steps of endpointSteps (endpoints, Services deleted
// and back, node ports) the kernel holds exactly what Compute asks for,
// and every sync but the first was partial in memory.
func TestIntegrationTrackerSync(t *testing.T) {
	roottest.Require(t, "creates network namespaces and programs IPVS, ipsets, addresses and iptables in them")
	roottest.RequireIPVS(t)
	ns := newTestNetns(t)
	b, k := newIntegrationBackend(t, ns)
	endpointSteps(rand.New(rand.NewPCG(24, 3)), 12, func(step int, snap *model.Snapshot) {
		patchable := b.state.patchable()
		res := syncAndCheck(t, fmt.Sprintf("step %d", step), b, ns, k, snap, step == 0, nil)
		if step > 0 && !patchable {
			t.Errorf("step %d: computed in full, want patched", step)
		}
		t.Logf("step %d: %d ops", step, res.Ops)
	})
}
