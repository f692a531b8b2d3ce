package nftables_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

// syncRoute is one of the two ways a sync reaches the kernel in
// TestIntegrationNetlinkBatchesLeaveWhatNFTLeaves: nft for everything, or
// NetlinkFirst (nftRuns counts what it still gave nft).
type syncRoute struct {
	name    string
	ns      string
	clock   *fakeClock
	syncer  *nftables.Syncer
	nftRuns int
}

// runCounter counts the transactions given to nft.
type runCounter struct {
	knftables.Interface
	runs *int
}

func (c runCounter) Run(ctx context.Context, tx *knftables.Transaction) error {
	*c.runs++
	return c.Interface.Run(ctx, tx)
}

// TestIntegrationNetlinkBatchesLeaveWhatNFTLeaves syncs the same
// snapshots into two network namespaces, one through nft alone and one
// through NetlinkFirst, and after every sync compares what the kernel
// holds — `nft list table` and `nft --debug=netlink list table` (every
// rule's expressions, registers and data, every set's and anonymous map's
// elements) — in IPv4 (Services with NodePorts: their external chains'
// mark and goto rules too; one endpoint moved, a Service added, two
// removed, and their chains deleted a sync later), a NodePort Service with
// externalTrafficPolicy Local (its external chain's short-circuit and
// local-traffic rules) and IPv6. After the first (full) sync, NetlinkFirst
// gives nft nothing.
func TestIntegrationNetlinkBatchesLeaveWhatNFTLeaves(t *testing.T) {
	requireRootAndNFT(t, "creates network namespaces and nftables rules in them")
	v6 := func() []*corev1.Service {
		return []*corev1.Service{fixtures.Service("default", "web6", "fd00:10:96::20", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)}, fixtures.SingleStackIPv6)}
	}
	v6Slice := func(addrs ...string) []*discoveryv1.EndpointSlice {
		var eps []discoveryv1.Endpoint
		for _, a := range addrs {
			eps = append(eps, fixtures.Endpoint(a, nodeA))
		}
		return []*discoveryv1.EndpointSlice{ipv6Slice("web6", eps...)}
	}
	// A NodePort Service with externalTrafficPolicy Local: its external
	// chain's short-circuit and local-traffic rules, its local chain.
	etpLocal := func(endpoints ...discoveryv1.Endpoint) *model.Snapshot {
		svc := fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30080)}, fixtures.NodePortType, fixtures.ExternalTrafficPolicyLocal)
		sl := fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, endpoints...)
		return model.Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{sl}, nodeA)
	}
	for _, c := range []struct {
		name   string
		family knftables.Family
		opts   nftables.Options
		snaps  []*model.Snapshot
	}{
		{"ip", knftables.IPv4Family, defaultOptions(), []*model.Snapshot{cluster(20, 3, 0), cluster(20, 3, 1), cluster(21, 3, 1), cluster(21, 3, 2), cluster(19, 3, 2), cluster(19, 3, 2)}},
		{"ip-etp-local", knftables.IPv4Family, defaultOptions(), []*model.Snapshot{
			etpLocal(fixtures.Endpoint("10.244.2.1", nodeB)),
			etpLocal(fixtures.Endpoint("10.244.2.1", nodeB), fixtures.Endpoint("10.244.1.1", nodeA)),
			etpLocal(fixtures.Endpoint("10.244.2.1", nodeB), fixtures.Endpoint("10.244.1.2", nodeA)),
			etpLocal(fixtures.Endpoint("10.244.2.2", nodeB)),
			etpLocal(fixtures.Endpoint("10.244.2.2", nodeB)), // the local chain, gone stale, deleted
		}},
		{"ip6", knftables.IPv6Family, ipv6Options(), []*model.Snapshot{
			model.BuildFamily(corev1.IPv6Protocol, nil, nil, nodeA),
			model.BuildFamily(corev1.IPv6Protocol, v6(), v6Slice("fd00:10:244::5", "fd00:10:244:1::6"), nodeA),
			model.BuildFamily(corev1.IPv6Protocol, v6(), v6Slice("fd00:10:244::5", "fd00:10:244:1::7"), nodeA),
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			routes := []*syncRoute{{name: "nft", ns: roottest.Netns(t, "svclabnftA")}, {name: "netlink", ns: roottest.Netns(t, "svclabnftB")}}
			for _, r := range routes {
				roottest.InNetns(t, r.ns, func() error {
					nft, err := nftables.OpenNFT(c.family)
					if err != nil {
						return err
					}
					var kernel knftables.Interface = nft
					if r.name == "netlink" {
						nl := nftables.NewNetlinkFirst(runCounter{nft, &r.nftRuns}, c.family)
						t.Cleanup(func() { nl.Close() })
						kernel = nl
					}
					renderer, err := nftables.NewRenderer(c.opts)
					r.clock = newClock()
					r.syncer = &nftables.Syncer{NFT: kernel, Renderer: renderer, Now: r.clock.now}
					return err
				})
			}
			for i, snap := range c.snaps {
				listings := map[string]string{}
				for _, r := range routes {
					r.clock.advance(2 * time.Second) // chains flushed a sync before are stale now
					roottest.InNetns(t, r.ns, func() error {
						if _, err := r.syncer.Sync(context.Background(), snap); err != nil {
							return fmt.Errorf("%s: sync %d: %w", r.name, i, err)
						}
						if r.name == "netlink" && i > 0 && r.nftRuns != 1 {
							return fmt.Errorf("sync %d: %d transactions went to nft, want only the first sync's", i, r.nftRuns)
						}
						listing, err := listTable(c.family)
						listings[r.name] = listing
						return err
					})
				}
				if listings["nft"] != listings["netlink"] {
					t.Fatalf("after sync %d the kernel holds different tables:\n--- through nft\n%s\n--- through netlink\n%s", i, listings["nft"], listings["netlink"])
				}
			}
			if stale := routes[1].syncer.StaleChains(); stale != 0 {
				t.Errorf("%d chains still stale after the last sync, want them deleted", stale)
			}
		})
	}
}

// listTable is the kube-proxy table of family as nft lists it, and with
// every rule's expressions and every set's elements as the kernel holds
// them (`--debug=netlink`, each set's elements sorted).
func listTable(family knftables.Family) (string, error) {
	var b strings.Builder
	for _, args := range [][]string{{"list", "table"}, {"--debug=netlink", "list", "table"}} {
		out, err := exec.Command("nft", append(args, string(family), nftables.TableName)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("nft %s: %v: %s", strings.Join(args, " "), err, out)
		}
		b.WriteString(sortElementRuns(string(out)))
	}
	return b.String(), nil
}

// sortElementRuns sorts each run of `element` lines of a --debug=netlink
// listing: the kernel dumps a hash set in the order of its hash, whose
// seed is random per set.
func sortElementRuns(listing string) string {
	lines := strings.Split(listing, "\n")
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "element ") {
			j++
		}
		slices.Sort(lines[i:j])
		i = max(j, i+1)
	}
	return strings.Join(lines, "\n")
}

// TestIntegrationNetlinkBatchRefusedWhole: a batch the kernel refuses
// (a map element whose goto names no chain) leaves the table as it was —
// the element added before it in the same batch is not there — and the
// error names the refused line and the kernel's reason.
func TestIntegrationNetlinkBatchRefusedWhole(t *testing.T) {
	requireRootAndNFT(t, "creates a network namespace and nftables rules in it")
	ns := roottest.Netns(t, "svclabnftE")
	roottest.InNetns(t, ns, func() error {
		ctx := context.Background()
		kernel, err := nftables.Open(knftables.IPv4Family)
		if err != nil {
			return err
		}
		defer kernel.Close()
		batches := 0
		kernel.Observe = func(int) { batches++ }
		r, err := nftables.NewRenderer(defaultOptions())
		if err != nil {
			return err
		}
		if _, err := (&nftables.Syncer{NFT: kernel, Renderer: r}).Sync(ctx, cluster(3, 2, 0)); err != nil {
			return err
		}
		tx := kernel.NewTransaction()
		tx.Add(&knftables.Element{Set: "cluster-ips", Key: []string{"10.96.9.9"}})
		tx.Add(&knftables.Element{Map: "service-ips", Key: []string{"10.96.9.9", "tcp", "80"}, Value: []string{"goto no-such-chain"}})
		err = kernel.Run(ctx, tx)
		if batches != 1 {
			return fmt.Errorf("the transaction did not go over netlink (%d batches)", batches)
		}
		if err == nil || !strings.Contains(err.Error(), `"add element ip kube-proxy service-ips { 10.96.9.9 . tcp . 80 : goto no-such-chain }"`) || !strings.Contains(err.Error(), "no such file or directory") {
			return fmt.Errorf("refused batch returned %v, want the map element's line and ENOENT", err)
		}
		elements, err := kernel.ListElements(ctx, "set", "cluster-ips")
		if err != nil {
			return err
		}
		for _, e := range elements {
			if e.Key[0] == "10.96.9.9" {
				return fmt.Errorf("cluster-ips holds 10.96.9.9 from the refused batch")
			}
		}
		return nil
	})
}
