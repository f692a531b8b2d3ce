package ipvs

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/ipvs/kernel/kerneltest"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// handBuilt is snap without the Tracker's promise: a Backend computes and
// diffs it in full.
func handBuilt(snap *model.Snapshot) *model.Snapshot {
	out := *snap
	out.StablePointers = false
	return &out
}

// connect gives every real server of the fake, in turn, the connection
// counts pick says (both 0 now and then), so that some destinations a sync
// removes are drained and some are deleted.
func connect(t *testing.T, k *kerneltest.Fake, pick func() (int, int)) {
	t.Helper()
	vss, err := k.VirtualServers()
	if err != nil {
		t.Fatal(err)
	}
	for _, vs := range vss {
		rss, err := k.RealServers(vs)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range rss {
			active, inactive := pick()
			k.SetConnections(vs, rs, active, inactive)
		}
	}
}

// checkPartialSyncsPlanAsFullOnes syncs the tracker steps of data into two
// backends on fake kernels of their own: one gets the Tracker's snapshots
// and syncs them partially (state.go, diffPartial), the other the same
// snapshots without the promise, computed and diffed in full against what
// it wrote. Between syncs both kernels' real servers get the same random
// connection counts. Every plan must be the same. It returns how many
// syncs were partial in memory, and how many planned any op.
func checkPartialSyncsPlanAsFullOnes(t *testing.T, opts Options, rng *rand.Rand, steps func(check func(step int, snap *model.Snapshot))) (patched, planned int) {
	t.Helper()
	partial, kp, _ := newTestBackend(t, opts)
	full, kf, _ := newTestBackend(t, opts)
	seed := rng.Uint64()
	conns := func() func() (int, int) {
		r := rand.New(rand.NewPCG(seed, 1))
		return func() (int, int) {
			if r.IntN(3) == 0 {
				return 0, 0
			}
			return r.IntN(3), r.IntN(3)
		}
	}
	steps(func(step int, snap *model.Snapshot) {
		// Each snapshot is synced twice: the second time nothing changed
		// but the connection counts, so only the draining move.
		for again := range 2 {
			if partial.written != nil && partial.state.stable && partial.state.shadowed == 0 {
				patched++
			}
			got, err := partial.Sync(snap)
			if err != nil {
				t.Fatalf("step %d/%d: partial sync: %v", step, again, err)
			}
			want, err := full.Sync(handBuilt(snap))
			if err != nil {
				t.Fatalf("step %d/%d: full sync: %v", step, again, err)
			}
			if diff := golden.LineDiff(want.Plan.String(), got.Plan.String()); diff != "" {
				t.Fatalf("step %d/%d: the partial sync plans otherwise than a full diff:\n%s", step, again, diff)
			}
			if want.Plan.String() != "" {
				planned++
			}
			connect(t, kp, conns())
			connect(t, kf, conns())
		}
	})
	return patched, planned
}

// TestPartialSyncPlansAsFullSync is the property test of diffPartial: over
// 300 random Tracker change sequences of each driver (modeltest.TrackerSteps for
// every shape of object, endpointSteps for many TCP destinations that
// come and go; up to 8 steps each), with and
// without excludeCIDRs, a partial sync plans the same ops in the same
// order as a full diff of the same snapshot against the same kernel,
// draining destinations included.
func TestPartialSyncPlansAsFullSync(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 11))
	patched, planned := 0, 0
	for i := range 300 {
		var opts Options
		if i%2 == 1 {
			opts.ExcludeCIDRs = []netip.Prefix{netip.MustParsePrefix("203.0.113.0/25")}
		}
		data := randomBytes(rng, rng.IntN(1500))
		p, n := checkPartialSyncsPlanAsFullOnes(t, opts, rng, func(check func(int, *model.Snapshot)) {
			modeltest.TrackerSteps(corev1.IPv4Protocol, data, 8, check)
		})
		patched, planned = patched+p, planned+n
		p, n = checkPartialSyncsPlanAsFullOnes(t, opts, rng, func(check func(int, *model.Snapshot)) {
			endpointSteps(rng, 8, check)
		})
		patched, planned = patched+p, planned+n
	}
	if planned < 500 {
		t.Errorf("only %d syncs planned anything", planned)
	}
	if patched < 500 {
		t.Errorf("only %d syncs were partial: the test hardly checks diffPartial", patched)
	}
}

// TestInPlaceUpdateIsSeenAsAChange: a source that edits its hand-built
// snapshot's service port in place and syncs the same snapshot again
// gets the change into the kernel; only a Tracker's snapshots are patched
// by pointer.
func TestInPlaceUpdateIsSeenAsAChange(t *testing.T) {
	b, _, _ := newTestBackend(t, Options{})
	snap := snapshot(sp("default", "web", "http", corev1.ProtocolTCP, "10.96.0.10", 80, eps("10.244.1.2:8080")))
	mustSync(t, b, snap)
	snap.ServicePorts[0].Endpoints[0].IP = addr("10.244.1.3")
	res := mustSync(t, b, snap)
	added := slices.ContainsFunc(res.Plan, func(op Op) bool {
		return op.Kind == OpAddRealServer && op.RS.Address == addr("10.244.1.3")
	})
	if !added {
		t.Fatalf("the in-place edit was not synced; plan:\n%s", res.Plan)
	}
}

// endpointSteps is steps changes to a Tracker holding 12 of scaleObjects'
// Services, a third of them NodePorts: each step sets, for a few of them,
// a slice with a random subset of six endpoints, or deletes or re-adds the
// Service, and hands the snapshot to check. TCP destinations come and go
// often, so that some are drained.
func endpointSteps(rng *rand.Rand, steps int, check func(step int, snap *model.Snapshot)) {
	const services, endpoints = 12, 6
	tr := model.NewTracker(corev1.IPv4Protocol, testNode)
	var svcs []*corev1.Service
	var slices []*discoveryv1.EndpointSlice
	for i := range services {
		svc, sl, _ := scaleObjects(i*3, endpoints)
		svcs, slices = append(svcs, svc), append(slices, sl)
		tr.SetService(svc)
		tr.SetEndpointSlice(sl)
	}
	for step := range steps {
		for range 1 + rng.IntN(4) {
			i := rng.IntN(services)
			switch rng.IntN(5) {
			case 0:
				tr.DeleteService(svcs[i].Namespace, svcs[i].Name)
			case 1:
				tr.SetService(svcs[i])
			default:
				sl := slices[i].DeepCopy()
				sl.Endpoints = nil
				for _, ep := range slices[i].Endpoints {
					if rng.IntN(3) != 0 {
						sl.Endpoints = append(sl.Endpoints, ep)
					}
				}
				tr.SetEndpointSlice(sl)
			}
		}
		check(step, tr.Snapshot())
	}
}
