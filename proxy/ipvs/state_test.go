package ipvs

import (
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// randomBytes are n bytes from rng.
func randomBytes(rng *rand.Rand, n int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	return data
}

// checkStateMatchesCompute drives a desiredState through the tracker steps
// of data and fails when a patched Desired differs from Compute's; it
// returns how many updates were patched rather than computed in full.
func checkStateMatchesCompute(t *testing.T, family corev1.IPFamily, s Settings, data []byte) (patched int) {
	t.Helper()
	var st desiredState
	modeltest.TrackerSteps(family, data, 8, func(step int, snap *model.Snapshot) {
		got, ch := st.update(snap, s, true)
		if ch != nil {
			patched++
		}
		if want := Compute(snap, s); got.String() != want.String() {
			t.Fatalf("step %d (patched %v): the kept state differs from Compute:\n%s", step, ch != nil, golden.LineDiff(want.String(), got.String()))
		}
	})
	return patched
}

// TestStateMatchesCompute is the property test of the kept desired state:
// over random change sequences of a Tracker (500 of them, up to 8 steps
// each, both families, every settings byte in turn) the Desired a partial
// sync patches is byte for byte Compute's from scratch.
func TestStateMatchesCompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 7))
	patched := 0
	for i := range 500 {
		data := randomBytes(rng, rng.IntN(1500))
		s := fuzzSettings(byte(i))
		patched += checkStateMatchesCompute(t, corev1.IPv4Protocol, s, data)
		patched += checkStateMatchesCompute(t, corev1.IPv6Protocol, settingsToIPv6(s), data)
	}
	if patched < 1000 {
		t.Errorf("only %d updates were patched: the test hardly checks the partial path", patched)
	}
}

// TestStateComputesInFullWithoutThePromise: a hand-built snapshot (no
// StablePointers) may edit a service port in place, so the state never
// patches from it, nor from the snapshot that follows it.
func TestStateComputesInFullWithoutThePromise(t *testing.T) {
	s := baseSettings()
	snap := snapshot(sp("default", "web", "http", corev1.ProtocolTCP, "10.96.0.10", 80, eps("10.244.1.2:8080")))
	var st desiredState
	st.update(snap, s, true)
	snap.ServicePorts[0].Endpoints[0].IP = addr("10.244.1.3")
	d, ch := st.update(snap, s, true)
	if ch != nil {
		t.Fatalf("patched from a snapshot without StablePointers")
	}
	if want := Compute(snap, s); d.String() != want.String() {
		t.Fatalf("the in-place edit is not seen:\n%s", golden.LineDiff(want.String(), d.String()))
	}
	stable := *snap
	stable.StablePointers = true
	if _, ch := st.update(&stable, s, true); ch != nil {
		t.Fatalf("patched from a state built of a snapshot without StablePointers")
	}
	if _, ch := st.update(&stable, s, true); ch == nil {
		t.Fatalf("two snapshots with StablePointers in a row: computed in full")
	}
	other := s
	other.NodeAddresses = other.NodeAddresses[:1]
	if _, ch := st.update(&stable, other, true); ch != nil {
		t.Fatalf("patched across a change of node addresses")
	}
}
