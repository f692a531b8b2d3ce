package nftables_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// recordingNFT keeps the lines of the transactions run, sorted (a sync's
// stale chains go in a transaction of their own, in map order).
type recordingNFT struct {
	knftables.Interface
	lines []string
}

func (r *recordingNFT) Run(ctx context.Context, tx *knftables.Transaction) error {
	r.lines = append(r.lines, strings.Split(tx.String(), "\n")...)
	return r.Interface.Run(ctx, tx)
}

// take returns the lines recorded since the last take, sorted.
func (r *recordingNFT) take() string {
	slices.Sort(r.lines)
	s := strings.Join(r.lines, "\n")
	r.lines = nil
	return s
}

// TestTrackerSnapshotsRenderAsComparedOnes: over random change sequences
// of a model.Tracker (300 of them, up to 8 steps each), a renderer that
// takes the snapshots' StablePointers promise (an unchanged service port
// is known by its pointer) writes exactly the transactions of one that
// compares every service port with what it committed (the same snapshots
// without the promise), and both tables end the same.
func TestTrackerSnapshotsRenderAsComparedOnes(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 11))
	promised, kept := 0, 0
	for i := range 300 {
		data := make([]byte, 400)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		clock := newClock()
		stable, stableFake := newSyncer(t, defaultOptions(), clock)
		compared, comparedFake := newSyncer(t, defaultOptions(), clock)
		stableTx, comparedTx := &recordingNFT{Interface: stableFake}, &recordingNFT{Interface: comparedFake}
		stable.NFT, compared.NFT = stableTx, comparedTx
		modeltest.TrackerSteps(corev1.IPv4Protocol, data, 8, func(step int, snap *model.Snapshot) {
			if !snap.StablePointers {
				t.Fatal("a Tracker's snapshot does not promise stable pointers")
			}
			promised++
			without := *snap
			without.StablePointers = false
			a, aerr := stable.Sync(context.Background(), snap)
			b, berr := compared.Sync(context.Background(), &without)
			if (aerr == nil) != (berr == nil) {
				t.Fatalf("sequence %d, step %d: errors %v and %v", i, step, aerr, berr)
			}
			if got, want := stableTx.take(), comparedTx.take(); got != want || a.RenderedServices != b.RenderedServices {
				t.Fatalf("sequence %d, step %d: with the promise %d services rendered, without %d; transactions differ:\n%s",
					i, step, a.RenderedServices, b.RenderedServices, golden.LineDiff(want, got))
			}
			if !a.Full && a.ServicePorts > 0 && a.RenderedServices == 0 {
				kept++ // every service unchanged, known by its pointer
			}
			clock.advance(2 * time.Second) // stale chains fall due in both
		})
		if got, want := stableFake.Dump(), comparedFake.Dump(); got != want {
			t.Fatalf("sequence %d: tables differ:\n%s", i, golden.LineDiff(want, got))
		}
	}
	if promised < 1000 || kept < 100 {
		t.Errorf("%d snapshots synced, %d partial syncs with services and none rendered; want ≥ 1000 and ≥ 100 for the test to say anything", promised, kept)
	}
}

// TestStablePointerIsNotComparedAgain shows the promise is what a Tracker's
// snapshot buys: a service port under the same pointer is taken as
// unchanged without looking at it — an edit in place (which a Tracker never
// makes) is not seen, while the same edit in a snapshot without the promise
// is (TestInPlaceUpdateIsSeenAsAChange).
func TestStablePointerIsNotComparedAgain(t *testing.T) {
	s, _ := newSyncer(t, defaultOptions(), newClock())
	snap := twoServices(fixtures.Endpoint("10.244.2.1", nodeB))
	snap.StablePointers = true
	mustSync(t, s, snap)
	web := snap.Lookup(model.ServicePortName{Namespace: "default", Name: "web", Port: "http", Protocol: corev1.ProtocolTCP})
	web.Endpoints = append(web.Endpoints, twoServices(fixtures.Endpoint("10.244.2.2", nodeB)).ServicePorts[1].Endpoints...)
	if res := mustSync(t, s, snap); res.Operations != 0 || res.RenderedServices != 0 {
		t.Errorf("same pointers under the promise: %d services rendered, %d operations; want none", res.RenderedServices, res.Operations)
	}
	snap.StablePointers = false
	if res := mustSync(t, s, snap); res.RenderedServices != 1 {
		t.Errorf("without the promise: %d services rendered, want web's", res.RenderedServices)
	}
}
