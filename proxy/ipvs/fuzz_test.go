package ipvs

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel/kerneltest"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
)

// fuzzSettings picks Compute's settings from one byte: the scheduler,
// masquerade-all, the local detector, nodePortAddresses and whether the
// node has addresses at all.
func fuzzSettings(b byte) Settings {
	s := baseSettings()
	s.Scheduler = []string{"", "rr", "mh", "wrr"}[b%4]
	s.MasqueradeAll = b&4 != 0
	if b&8 != 0 {
		s.LocalDetector = nil
	}
	if b&16 != 0 {
		s.NodePortCIDRs = []netip.Prefix{netip.MustParsePrefix("192.168.0.0/24")}
	}
	if b&32 != 0 {
		s.NodeAddresses = nil
	}
	s.RandomFully = b&64 != 0
	if b&128 != 0 {
		s.MasqueradeBit = 31
	}
	return s
}

// snapshotOf is the proxy's view, for the proxier of family, of the
// Services and EndpointSlices modeltest.Generate makes from data (dual-stack
// and IPv6 ones among them).
func snapshotOf(family corev1.IPFamily, data []byte) *model.Snapshot {
	services, slices := modeltest.Generate(data)
	return model.BuildFamily(family, services, slices, modeltest.NodeName)
}

// FuzzCompute builds Services and EndpointSlices from the input
// (modeltest.Generate), computes the IPVS desired state, applies it to the
// fake kernel and the iptables fake, then moves to a second generated
// state; and does the same, on the same fake kernel with ip6tables of its
// own, for the IPv6 proxier (a dual-stack node) with both states carried
// over to IPv6 (snapshotToIPv6), and checks the IPv6 view of the generated
// objects too. Properties:
//   - no panic, and Compute is deterministic;
//   - the desired state keeps its documented order (sorted, unique virtual
//     servers, real servers and set entries) and every real server is an
//     endpoint of its service port;
//   - every cluster IP is bound to kube-ipvs0 and has its virtual server;
//   - the plan from an empty node applies without error (the iptables
//     payload included), and diffing again gives an empty plan; the same
//     for the change to the second state;
//   - over a Tracker's snapshots of both inputs read as change steps
//     (modeltest.TrackerSteps), the desired state a partial sync patches is
//     Compute's (both families), and its plans are those of a full diff,
//     with random connection counts draining destinations.
func FuzzCompute(f *testing.F) {
	modeltest.AddSeeds(f)
	f.Fuzz(func(t *testing.T, o byte, first, second []byte) {
		s := fuzzSettings(o)
		snap := modeltest.Snapshot(first)
		d := Compute(snap, s)
		if again := Compute(modeltest.Snapshot(first), s); again.String() != d.String() {
			t.Fatalf("the same input computes differently")
		}
		checkDesired(t, snap, d)

		k := kerneltest.New(nodeAddressesOfBothFamilies()...)
		ipt := newFakeIPTables()
		applied := syncTo(t, k, ipt, d, nil)
		next := Compute(modeltest.Snapshot(second), s)
		checkDesired(t, modeltest.Snapshot(second), next)
		syncTo(t, k, ipt, next, applied)

		s6, ipt6 := settingsToIPv6(s), newFakeIPTables()
		snap6 := snapshotToIPv6(modeltest.Snapshot(first))
		d6 := Compute(snap6, s6)
		if again := Compute(snapshotToIPv6(modeltest.Snapshot(first)), s6); again.String() != d6.String() {
			t.Fatalf("the same input computes differently for IPv6")
		}
		checkDesired(t, snap6, d6)
		applied6 := syncTo(t, k, ipt6, d6, nil)
		snap6 = snapshotToIPv6(modeltest.Snapshot(second))
		next6 := Compute(snap6, s6)
		checkDesired(t, snap6, next6)
		syncTo(t, k, ipt6, next6, applied6)
		generated6 := snapshotOf(corev1.IPv6Protocol, second)
		checkDesired(t, generated6, Compute(generated6, s6))
		// The IPv4 proxier's state is untouched by the IPv6 one's.
		a, err := ReadActual(k)
		if err != nil {
			t.Fatal(err)
		}
		if rest := Diff(next, a, DiffOptions{AppliedIPTables: next.IPTables}); len(rest) != 0 {
			t.Fatalf("the IPv6 proxier changed the IPv4 one's state:\n%s", rest)
		}

		// A Tracker fed both inputs as steps: partial syncs patch and
		// plan as the full computation does.
		steps := append(slices.Clone(first), second...)
		checkStateMatchesCompute(t, corev1.IPv4Protocol, s, steps)
		checkStateMatchesCompute(t, corev1.IPv6Protocol, s6, steps)
		rng := rand.New(rand.NewPCG(uint64(o), 24))
		checkPartialSyncsPlanAsFullOnes(t, Options{}, rng, func(check func(int, *model.Snapshot)) {
			modeltest.TrackerSteps(corev1.IPv4Protocol, steps, 8, check)
		})
	})
}

// syncTo brings the fakes to d, the desired state of d.Family's proxier,
// and checks that nothing is left to do. It returns the payload the
// iptables fake now holds.
func syncTo(t *testing.T, k *kerneltest.Fake, ipt *fakeIPTables, d *Desired, appliedIPTables []byte) []byte {
	t.Helper()
	a, err := ReadActualOf(k, d.Family)
	if err != nil {
		t.Fatal(err)
	}
	plan := Diff(d, a, DiffOptions{AppliedIPTables: appliedIPTables})
	if _, err := Apply(k, ipt, plan); err != nil {
		t.Fatalf("applying the plan failed: %v\nplan:\n%s", err, plan)
	}
	a, err = ReadActualOf(k, d.Family)
	if err != nil {
		t.Fatal(err)
	}
	if rest := Diff(d, a, DiffOptions{AppliedIPTables: d.IPTables}); len(rest) != 0 {
		t.Fatalf("after applying the plan, Diff still wants:\n%s", rest)
	}
	return d.IPTables
}

func checkDesired(t *testing.T, snap *model.Snapshot, d *Desired) {
	t.Helper()
	if !slices.IsSortedFunc(d.Addresses, netip.Addr.Compare) || len(slices.Compact(slices.Clone(d.Addresses))) != len(d.Addresses) {
		t.Errorf("addresses not sorted and unique: %v", d.Addresses)
	}
	bound := map[netip.Addr]bool{}
	for _, a := range d.Addresses {
		bound[a] = true
	}
	byKey := map[string]DesiredVirtualServer{}
	for i, vs := range d.VirtualServers {
		if _, dup := byKey[vs.Key()]; dup {
			t.Errorf("virtual server %s twice", vs.Key())
		}
		byKey[vs.Key()] = vs
		if i > 0 {
			p := d.VirtualServers[i-1]
			if x := p.Address.Compare(vs.Address); x > 0 || x == 0 && (p.Protocol > vs.Protocol || p.Protocol == vs.Protocol && p.Port > vs.Port) {
				t.Errorf("virtual servers out of order: %s before %s", p.Key(), vs.Key())
			}
		}
		for j := 1; j < len(vs.RealServers); j++ {
			if compareRealServers(vs.RealServers[j-1], vs.RealServers[j]) >= 0 {
				t.Errorf("%s: real servers not sorted and unique: %v", vs.Key(), vs.RealServers)
			}
		}
		if sp := lookupService(snap, vs.Service); sp == nil {
			t.Errorf("%s: belongs to no service port %q", vs.Key(), vs.Service)
		} else {
			for _, rs := range vs.RealServers {
				if !slices.ContainsFunc(sp.Endpoints, func(ep model.Endpoint) bool {
					return ep.IP == rs.Address && uint16(ep.Port) == rs.Port
				}) {
					t.Errorf("%s: real server %s is no endpoint of %s", vs.Key(), rs.Key(), vs.Service)
				}
			}
		}
	}
	for _, sp := range snap.ServicePorts {
		if !bound[sp.ClusterIP] {
			t.Errorf("%s: cluster IP %s not bound to %s", sp.Name, sp.ClusterIP, DummyDevice)
		}
		key := kernel.VirtualServer{Address: sp.ClusterIP, Protocol: kernel.Protocol(sp.Protocol), Port: uint16(sp.Port)}.Key()
		if _, ok := byKey[key]; !ok {
			t.Errorf("%s: no virtual server %s", sp.Name, key)
		}
	}
	for _, set := range d.Sets {
		if !slices.IsSorted(set.Entries) || len(slices.Compact(slices.Clone(set.Entries))) != len(set.Entries) {
			t.Errorf("set %s: entries not sorted and unique: %v", set.Name, set.Entries)
		}
	}
}

func lookupService(snap *model.Snapshot, name string) *model.ServicePort {
	for _, sp := range snap.ServicePorts {
		if sp.Name.String() == name {
			return sp
		}
	}
	return nil
}
