package nftables_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/proxy/model"
)

// twoServices is web (2 endpoints) and api (1 endpoint), both NodePort.
func twoServices(webEndpoints ...discoveryv1.Endpoint) *model.Snapshot {
	services := []*corev1.Service{
		fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30080)}, fixtures.NodePortType),
		fixtures.Service("default", "api", "10.96.0.21", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30081)}, fixtures.NodePortType),
	}
	slices := []*discoveryv1.EndpointSlice{
		fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, webEndpoints...),
		fixtures.EndpointSlice("default", "api", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.1.9", nodeA)),
	}
	return model.Build(services, slices, nodeA)
}

func TestUnchangedSnapshotRunsAnEmptyTransaction(t *testing.T) {
	s, _ := newSyncer(t, defaultOptions(), newClock())
	first := mustSync(t, s, twoServices(fixtures.Endpoint("10.244.1.1", nodeA), fixtures.Endpoint("10.244.2.1", nodeB)))
	if !first.Full {
		t.Fatal("the first sync is not a full one")
	}
	again := mustSync(t, s, twoServices(fixtures.Endpoint("10.244.1.1", nodeA), fixtures.Endpoint("10.244.2.1", nodeB)))
	if again.Full || again.Operations != 0 {
		t.Errorf("second sync of the same objects: full=%v, %d operations; want a partial sync with none", again.Full, again.Operations)
	}
}

// TestEndpointChangeTouchesOnlyItsService: adding an endpoint to web
// rewrites web's service chain and adds a hairpin element, and leaves api's
// chains, the fixed chains and every other element alone.
func TestEndpointChangeTouchesOnlyItsService(t *testing.T) {
	s, fake := newSyncer(t, defaultOptions(), newClock())
	mustSync(t, s, twoServices(fixtures.Endpoint("10.244.2.1", nodeB)))
	res := mustSync(t, s, twoServices(fixtures.Endpoint("10.244.1.1", nodeA), fixtures.Endpoint("10.244.2.1", nodeB)))
	if res.Full {
		t.Fatal("an endpoint change caused a full sync")
	}
	// add+flush of web's service and external chains (4), their rules:
	// masquerade and goto in the external chain, the DNAT (3), and the
	// new local endpoint's hairpin element (1).
	if res.Operations != 8 {
		t.Errorf("%d operations, want 8 (web's two chains rewritten, one hairpin element):\n%s", res.Operations, fake.Dump())
	}
	dump := fake.Dump()
	if !strings.Contains(dump, "numgen random mod 2 map { 0 : 10.244.1.1 . 8080 , 1 : 10.244.2.1 . 8080 }") {
		t.Errorf("web's chain does not balance over both endpoints:\n%s", dump)
	}
	assertSameAsFresh(t, fake.Dump(), twoServices(fixtures.Endpoint("10.244.1.1", nodeA), fixtures.Endpoint("10.244.2.1", nodeB)))
}

// TestRemovedServiceChainsAreDeletedASecondLater: upstream flushes the
// chains of a removed service at once and deletes them in a later sync at
// least a second afterwards (older kernels see a chain as referenced for a
// while after its map element went).
func TestRemovedServiceChainsAreDeletedASecondLater(t *testing.T) {
	clock := newClock()
	s, fake := newSyncer(t, defaultOptions(), clock)
	mustSync(t, s, twoServices(fixtures.Endpoint("10.244.2.1", nodeB)))
	onlyAPI := model.Build(
		[]*corev1.Service{fixtures.Service("default", "api", "10.96.0.21", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30081)}, fixtures.NodePortType)},
		[]*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "api", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.1.9", nodeA))}, nodeA)
	res := mustSync(t, s, onlyAPI)
	if len(res.StaleChains) != 2 || s.StaleChains() != 2 {
		t.Fatalf("stale chains %v (%d waiting), want web's service and external chains", res.StaleChains, s.StaleChains())
	}
	if n := lines(fake.Dump(), "add chain ip kube-proxy service-") - 1; n != 2 { // - service-endpoints-check
		t.Errorf("%d service chains right after the removal, want 2 (api's, and web's flushed one)", n)
	}
	// As upstream, a sync that finds a stale chain still there flushes it
	// again and restarts its second.
	clock.advance(500 * time.Millisecond)
	mustSync(t, s, onlyAPI)
	if s.StaleChains() != 2 {
		t.Errorf("stale chains deleted after half a second")
	}
	clock.advance(1100 * time.Millisecond)
	mustSync(t, s, onlyAPI)
	if s.StaleChains() != 0 {
		t.Errorf("%d stale chains left 1.1 s after the last sync that flushed them", s.StaleChains())
	}
	assertSameAsFresh(t, fake.Dump(), onlyAPI)
}

func TestFullSyncEveryHour(t *testing.T) {
	clock := newClock()
	s, _ := newSyncer(t, defaultOptions(), clock)
	snap := twoServices(fixtures.Endpoint("10.244.2.1", nodeB))
	mustSync(t, s, snap)
	clock.advance(59 * time.Minute)
	if mustSync(t, s, snap).Full {
		t.Error("full sync before the hour")
	}
	clock.advance(2 * time.Minute)
	if !mustSync(t, s, snap).Full {
		t.Error("no full sync after an hour")
	}
}

// TestFullSyncTakesOverTheKernelsElements: a new proxy (a restart) finds
// the previous one's table; its first (full) sync reads the elements and
// deletes only those that no longer belong.
func TestFullSyncTakesOverTheKernelsElements(t *testing.T) {
	s, fake := newSyncer(t, defaultOptions(), newClock())
	mustSync(t, s, twoServices(fixtures.Endpoint("10.244.1.1", nodeA)))
	restarted, _ := newSyncer(t, defaultOptions(), newClock())
	restarted.NFT = fake
	res := mustSync(t, restarted, twoServices(fixtures.Endpoint("10.244.2.1", nodeB)))
	if !res.Full {
		t.Fatal("a new syncer's first sync is not full")
	}
	assertSameAsFresh(t, fake.Dump(), twoServices(fixtures.Endpoint("10.244.2.1", nodeB)))
}

// assertSameAsFresh compares dump with what a fresh syncer writes for snap
// in one full sync (the element order may differ: compared as sorted
// lines within each run of elements).
func assertSameAsFresh(t *testing.T, dump string, snap *model.Snapshot) {
	t.Helper()
	fresh, fake := newSyncer(t, defaultOptions(), nil)
	mustSync(t, fresh, snap)
	if got, want := sortElements(dump), sortElements(fake.Dump()); got != want {
		t.Errorf("table after the partial syncs differs from a fresh full sync:\n--- fresh\n%s\n--- partial\n%s", want, got)
	}
}

// TestInPlaceUpdateIsSeenAsAChange: a source that edits its snapshot's
// service ports in place (rather than building new ones) still gets the
// changed service's chains rewritten.
func TestInPlaceUpdateIsSeenAsAChange(t *testing.T) {
	s, fake := newSyncer(t, defaultOptions(), newClock())
	snap := twoServices(fixtures.Endpoint("10.244.2.1", nodeB))
	mustSync(t, s, snap)
	web := snap.Lookup(model.ServicePortName{Namespace: "default", Name: "web", Port: "http", Protocol: corev1.ProtocolTCP})
	web.Endpoints = append(web.Endpoints, twoServices(fixtures.Endpoint("10.244.2.2", nodeB)).ServicePorts[1].Endpoints...)
	res := mustSync(t, s, snap)
	if res.Operations == 0 {
		t.Fatal("an in-place change ran an empty transaction")
	}
	assertSameAsFresh(t, fake.Dump(), twoServices(fixtures.Endpoint("10.244.2.1", nodeB), fixtures.Endpoint("10.244.2.2", nodeB)))
}

// TestSharedElementFollowsTheLaterService: two services claim the same
// external IP and port (one service-ips key). As a full render in the
// snapshot's order, the later service's value wins; when it goes, a
// partial sync gives the key back to the earlier one.
func TestSharedElementFollowsTheLaterService(t *testing.T) {
	both := func(withLater bool) *model.Snapshot {
		services := []*corev1.Service{fixtures.Service("default", "a", "10.96.0.30", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)}, fixtures.ExternalIPs("198.51.100.9"))}
		slices := []*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "a", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.2.1", nodeB))}
		if withLater {
			services = append(services, fixtures.Service("default", "b", "10.96.0.31", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)}, fixtures.ExternalIPs("198.51.100.9")))
			slices = append(slices, fixtures.EndpointSlice("default", "b", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.2.2", nodeB)))
		}
		return model.Build(services, slices, nodeA)
	}
	clock := newClock()
	s, fake := newSyncer(t, defaultOptions(), clock)
	mustSync(t, s, both(true))
	if !strings.Contains(fake.Dump(), "198.51.100.9 . tcp . 80 : goto external-") || !strings.Contains(fake.Dump(), "default/b/tcp/http") {
		t.Fatalf("no shared element:\n%s", fake.Dump())
	}
	for _, step := range []bool{false, true, false} {
		if res := mustSync(t, s, both(step)); res.Full {
			t.Fatal("a service change caused a full sync")
		}
		clock.advance(1100 * time.Millisecond)
		mustSync(t, s, both(step)) // deletes b's stale chains
		assertSameAsFresh(t, fake.Dump(), both(step))
	}
}
