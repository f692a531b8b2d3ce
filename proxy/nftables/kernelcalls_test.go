package nftables_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
	"github.com/svclab/svclab/proxy/nftables"
)

// These tests count what reaches the kernel (countingNFT over
// knftables.Fake): a partial sync renders against what was committed, so
// it lists nothing; a sync with nothing to do runs nothing.

// newCountingSyncer is newSyncer with the calls to the fake counted.
func newCountingSyncer(t *testing.T, clock *fakeClock) (*nftables.Syncer, *countingNFT) {
	t.Helper()
	s, fake := newSyncer(t, defaultOptions(), clock)
	counter := &countingNFT{Interface: fake}
	s.NFT = counter
	return s, counter
}

// cluster is modeltest.Cluster's services (every tenth a NodePort) with
// endpoints each; changed > 0 moves the first endpoint of the middle
// service to a new address (a different one for each value).
func cluster(services, endpoints, changed int) *model.Snapshot {
	svcs, slices := modeltest.Cluster(services, endpoints)
	if changed > 0 {
		mid := services / 2
		slices[mid] = modeltest.WithEndpointChanged(slices[mid], 1<<20+changed)
	}
	return model.Build(svcs, slices, modeltest.NodeName)
}

func TestNothingChangedRunsNoNFT(t *testing.T) {
	s, counter := newCountingSyncer(t, newClock())
	mustSync(t, s, cluster(50, 3, 0))
	counter.take()
	res := mustSync(t, s, cluster(50, 3, 0))
	if calls := counter.take(); calls.Execs() != 0 {
		t.Errorf("a sync with nothing changed reached the kernel: %+v", calls)
	}
	if res.Full || res.Operations != 0 {
		t.Errorf("nothing changed: full=%v, %d operations; want a partial sync with none", res.Full, res.Operations)
	}
}

// TestOneEndpointChangedIsProportionalToTheChange: among 20 or 500
// services, moving one endpoint is one transaction of the same few
// operations (that service's chains rewritten), and no listing.
func TestOneEndpointChangedIsProportionalToTheChange(t *testing.T) {
	operations := map[int]int{}
	for _, services := range []int{20, 500} {
		t.Run(fmt.Sprintf("services=%d", services), func(t *testing.T) {
			s, counter := newCountingSyncer(t, newClock())
			mustSync(t, s, cluster(services, 10, 0))
			counter.take()
			res := mustSync(t, s, cluster(services, 10, 1))
			calls := counter.take()
			if res.Full || calls.Listings() != 0 || calls.Runs != 1 {
				t.Errorf("one endpoint changed: full=%v, calls %+v; want a partial sync, one transaction and no listing", res.Full, calls)
			}
			// The middle service is a NodePort: add+flush of its service
			// and external chains (4), masquerade and goto in the external
			// chain (2), the DNAT rule (1).
			if calls.Operations != 7 {
				t.Errorf("%d operations, want 7 (one service's two chains rewritten)", calls.Operations)
			}
			operations[services] = calls.Operations
			assertSameAsFresh(t, counter.Interface.(interface{ Dump() string }).Dump(), cluster(services, 10, 1))
		})
	}
	if operations[20] != operations[500] {
		t.Errorf("operations grow with the number of services: %v", operations)
	}
}

// TestAfterAnErrorTheNextSyncReadsTheKernel: a failed transaction leaves
// the kernel in a state the syncer does not know; the next sync is a full
// one that lists the table and every fixed set and map.
func TestAfterAnErrorTheNextSyncReadsTheKernel(t *testing.T) {
	s, counter := newCountingSyncer(t, newClock())
	mustSync(t, s, cluster(20, 2, 0))
	counter.failNextRun()
	if _, err := s.Sync(context.Background(), cluster(20, 2, 1)); !errors.Is(err, errInjected) {
		t.Fatalf("sync with a failing nft: %v, want the injected error", err)
	}
	counter.take()
	res := mustSync(t, s, cluster(20, 2, 1))
	calls := counter.take()
	sets, maps := nftables.ContainerNames()
	if !res.Full || calls.ListAlls != 1 || calls.ListElements != len(sets)+len(maps) {
		t.Errorf("sync after an error: full=%v, calls %+v; want a full sync listing the table and its %d sets and maps", res.Full, calls, len(sets)+len(maps))
	}
	if again := mustSync(t, s, cluster(20, 2, 1)); again.Full {
		t.Error("the sync after the recovery is a full one again")
	}
	if calls := counter.take(); calls.Execs() != 0 {
		t.Errorf("nothing changed after the recovery, yet %+v", calls)
	}
}

// TestUnlistedFullSyncIsFollowedByAFullOne: a full sync that could not
// list the table cannot know its stale chains; the next sync is a full one
// that lists it again.
func TestUnlistedFullSyncIsFollowedByAFullOne(t *testing.T) {
	s, counter := newCountingSyncer(t, newClock())
	counter.failNextListAll()
	if res := mustSync(t, s, cluster(20, 2, 0)); !res.Full {
		t.Fatal("the first sync is not a full one")
	}
	counter.take()
	if res := mustSync(t, s, cluster(20, 2, 0)); !res.Full {
		t.Error("the sync after an unlisted full sync is not a full one")
	}
	if calls := counter.take(); calls.ListAlls != 1 {
		t.Errorf("the sync after an unlisted full sync: %+v, want the table listed", calls)
	}
	if res := mustSync(t, s, cluster(20, 2, 0)); res.Full {
		t.Error("full syncs go on after a successful listing")
	}
}

// TestFullSyncReadsTheKernelEveryPeriod: the hourly full sync (and one a
// caller forces) lists the table again and rewrites everything.
func TestFullSyncReadsTheKernelEveryPeriod(t *testing.T) {
	clock := newClock()
	s, counter := newCountingSyncer(t, clock)
	snap := cluster(20, 2, 0)
	mustSync(t, s, snap)
	counter.take()
	clock.advance(nftables.FullSyncPeriod - time.Minute)
	mustSync(t, s, snap)
	if calls := counter.take(); calls.Execs() != 0 {
		t.Errorf("before the period: %+v, want no nft", calls)
	}
	clock.advance(2 * time.Minute)
	if res := mustSync(t, s, snap); !res.Full || res.Operations == 0 {
		t.Errorf("after the period: full=%v, %d operations; want a full rewrite", res.Full, res.Operations)
	}
	if calls := counter.take(); calls.ListAlls != 1 || calls.Runs != 1 {
		t.Errorf("after the period: %+v, want one listing of the table and one transaction", calls)
	}
	s.ForceFull()
	if res := mustSync(t, s, snap); !res.Full {
		t.Error("ForceFull: the next sync is not a full one")
	}
	if calls := counter.take(); calls.ListAlls != 1 {
		t.Errorf("ForceFull: %+v, want the table listed", calls)
	}
}

// TestStaleChainsWithoutListing: a removed service's chains are flushed
// once, wait a second without a sync touching the kernel for them, then
// are deleted in a transaction of their own, all without listing.
func TestStaleChainsWithoutListing(t *testing.T) {
	clock := newClock()
	s, counter := newCountingSyncer(t, clock)
	mustSync(t, s, twoServices(fixtures.Endpoint("10.244.2.1", nodeB)))
	counter.take()
	res := mustSync(t, s, onlyAPI())
	if calls := counter.take(); calls.Runs != 1 || calls.Listings() != 0 || len(res.StaleChains) != 2 {
		t.Fatalf("removing web: calls %+v, stale %v; want one transaction flushing web's two chains", calls, res.StaleChains)
	}
	clock.advance(500 * time.Millisecond)
	mustSync(t, s, onlyAPI())
	if calls := counter.take(); calls.Execs() != 0 || s.StaleChains() != 2 {
		t.Errorf("half a second later: calls %+v, %d stale chains; want no nft, both chains waiting", calls, s.StaleChains())
	}
	clock.advance(600 * time.Millisecond)
	mustSync(t, s, onlyAPI())
	if calls := counter.take(); calls.Runs != 1 || calls.Operations != 2 || calls.Listings() != 0 || s.StaleChains() != 0 {
		t.Errorf("1.1 s later: calls %+v, %d stale chains; want one transaction deleting the two chains", calls, s.StaleChains())
	}
	mustSync(t, s, onlyAPI())
	if calls := counter.take(); calls.Execs() != 0 {
		t.Errorf("after the deletion: %+v, want no nft", calls)
	}
	assertSameAsFresh(t, counter.Interface.(interface{ Dump() string }).Dump(), onlyAPI())
}

// TestFailedStaleChainDeletionReadsTheKernel: when deleting stale chains
// fails, the sync is a full one that finds them in the kernel and flushes
// them again.
func TestFailedStaleChainDeletionReadsTheKernel(t *testing.T) {
	clock := newClock()
	s, counter := newCountingSyncer(t, clock)
	mustSync(t, s, twoServices(fixtures.Endpoint("10.244.2.1", nodeB)))
	mustSync(t, s, onlyAPI())
	clock.advance(1100 * time.Millisecond)
	counter.failNextRun()
	counter.take()
	res := mustSync(t, s, onlyAPI())
	if calls := counter.take(); !res.Full || calls.ListAlls != 1 || len(res.StaleChains) != 2 || s.StaleChains() != 2 {
		t.Errorf("after a failed deletion: full=%v, calls %+v, stale %v; want a full sync finding web's two chains again", res.Full, calls, res.StaleChains)
	}
}

// onlyAPI is twoServices without web.
func onlyAPI() *model.Snapshot {
	return model.Build(
		[]*corev1.Service{fixtures.Service("default", "api", "10.96.0.21", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30081)}, fixtures.NodePortType)},
		[]*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "api", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.1.9", nodeA))}, nodeA)
}
