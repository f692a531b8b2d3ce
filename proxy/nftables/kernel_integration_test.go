package nftables_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

// webServiceIP is web's service-ips key in twoServices.
var webServiceIP = []string{"10.96.0.20", "tcp", "80"}

// TestIntegrationCachedSyncsAgainstTheKernel runs the cached path against
// the real kernel in a network namespace of its own: partial syncs list
// nothing and the kernel accepts what they render from the committed
// state; an element deleted outside svclab stays missing through a
// partial sync and is back after the next full sync; a removed service's
// chains are flushed, then deleted, without listing.
func TestIntegrationCachedSyncsAgainstTheKernel(t *testing.T) {
	requireRootAndNFT(t, "creates a network namespace and nftables rules in it")
	ns := roottest.Netns(t, "svclabnftc")
	roottest.InNetns(t, ns, func() error {
		ctx := context.Background()
		kernel, r, err := openKernelAndRenderer()
		if err != nil {
			return err
		}
		clock := newClock()
		counter := &countingNFT{Interface: kernel}
		s := &nftables.Syncer{NFT: counter, Renderer: r, Now: clock.now}
		sync := func(step string, want func(nftables.Result, kernelCalls) bool, snapEndpoints ...string) error {
			res, err := s.Sync(ctx, twoServicesOn(snapEndpoints...))
			calls := counter.take()
			if err != nil {
				return fmt.Errorf("%s: %w", step, err)
			}
			if !want(res, calls) {
				return fmt.Errorf("%s: full=%v, calls %+v", step, res.Full, calls)
			}
			return nil
		}
		partialWithoutListing := func(res nftables.Result, c kernelCalls) bool { return !res.Full && c.Listings() == 0 }
		if err := sync("first sync", func(res nftables.Result, _ kernelCalls) bool { return res.Full }, "10.244.2.1"); err != nil {
			return err
		}

		// A change made outside svclab: web's cluster IP leaves service-ips.
		tx := kernel.NewTransaction()
		tx.Delete(&knftables.Element{Map: "service-ips", Key: webServiceIP})
		if err := kernel.Run(ctx, tx); err != nil {
			return fmt.Errorf("deleting web's element outside svclab: %w", err)
		}
		if err := sync("endpoint added", func(res nftables.Result, c kernelCalls) bool {
			return partialWithoutListing(res, c) && c.Runs == 1
		}, "10.244.2.1", "10.244.2.2"); err != nil {
			return err
		}
		if has, err := hasElement(ctx, kernel, webServiceIP); err != nil || has {
			return fmt.Errorf("after a partial sync web's element is there=%v (%v); the partial sync was expected not to see the outside change", has, err)
		}
		if err := sync("nothing changed", func(res nftables.Result, c kernelCalls) bool {
			return partialWithoutListing(res, c) && c.Execs() == 0
		}, "10.244.2.1", "10.244.2.2"); err != nil {
			return err
		}

		clock.advance(nftables.FullSyncPeriod + time.Minute)
		if err := sync("hourly full sync", func(res nftables.Result, c kernelCalls) bool {
			return res.Full && c.ListAlls == 1
		}, "10.244.2.1", "10.244.2.2"); err != nil {
			return err
		}
		if has, err := hasElement(ctx, kernel, webServiceIP); err != nil || !has {
			return fmt.Errorf("the full sync did not restore web's element (%v)", err)
		}

		return removeWebAndDeleteItsChains(ctx, s, counter, clock)
	})
}

// removeWebAndDeleteItsChains: removing web flushes its two chains in a
// partial sync; 1.1 s later a sync deletes them, and the kernel has none
// of web's chains left, all without listing the table.
func removeWebAndDeleteItsChains(ctx context.Context, s *nftables.Syncer, counter *countingNFT, clock *fakeClock) error {
	res, err := s.Sync(ctx, onlyAPI())
	if calls := counter.take(); err != nil || res.Full || calls.Listings() != 0 || len(res.StaleChains) != 2 {
		return fmt.Errorf("removing web: %v, full=%v, calls %+v, stale %v", err, res.Full, calls, res.StaleChains)
	}
	clock.advance(1100 * time.Millisecond)
	if _, err := s.Sync(ctx, onlyAPI()); err != nil {
		return fmt.Errorf("the sync deleting web's chains: %w", err)
	}
	if calls := counter.take(); calls.Runs != 1 || calls.Listings() != 0 {
		return fmt.Errorf("deleting web's chains: calls %+v, want one transaction and no listing", calls)
	}
	chains, err := counter.Interface.List(ctx, "chain")
	if err != nil {
		return err
	}
	for _, stale := range res.StaleChains {
		if slices.Contains(chains, stale) {
			return fmt.Errorf("chain %s still in the kernel after its deletion: %v", stale, chains)
		}
	}
	return nil
}

// twoServicesOn is twoServices with web's endpoints on node B at ips.
func twoServicesOn(ips ...string) *model.Snapshot {
	var eps []discoveryv1.Endpoint
	for _, ip := range ips {
		eps = append(eps, fixtures.Endpoint(ip, nodeB))
	}
	return twoServices(eps...)
}

// hasElement reports whether service-ips holds key.
func hasElement(ctx context.Context, nft knftables.Interface, key []string) (bool, error) {
	elems, err := nft.ListElements(ctx, "map", "service-ips")
	if err != nil {
		return false, err
	}
	for _, e := range elems {
		if slices.Equal(e.Key, key) {
			return true, nil
		}
	}
	return false, nil
}
