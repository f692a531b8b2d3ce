package nftables_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

// timedNFT is a knftables.Interface that adds up the time its
// transactions take (the `nft` exec, from start to exit).
type timedNFT struct {
	knftables.Interface
	runs    int
	running time.Duration
}

func (t *timedNFT) Run(ctx context.Context, tx *knftables.Transaction) error {
	start := time.Now()
	err := t.Interface.Run(ctx, tx)
	t.runs++
	t.running += time.Since(start)
	return err
}

// take returns the transactions and their time since the last take.
func (t *timedNFT) take() (int, time.Duration) {
	runs, running := t.runs, t.running
	t.runs, t.running = 0, 0
	return runs, running
}

// BenchmarkSyncInTheKernel is BenchmarkSync against the real kernel, in a
// network namespace of its own: after a first full sync (reported as
// cold-ms, not in ns/op), one endpoint of the middle Service changes per
// sync, two snapshots in turn, built before the timer. ns/op is the whole
// sync (rendering, the transaction's text, writing it until the kernel
// has committed it); kernel-ns/sync is the part spent writing — the
// netlink batch NetlinkFirst sends, or `nft` where it cannot — and
// go-ns/sync the rest. At 10,000 Services × 10 endpoints the batch is
// most of it: the kernel validates the table's jumps on commit; `nft`
// itself, which reads every chain and set of the table into its cache
// before it adds a rule, took twice that and more (README "Performance").
func BenchmarkSyncInTheKernel(b *testing.B) {
	requireRootAndNFT(b, "creates a network namespace and an nftables table in it")
	for _, size := range []struct{ services, endpoints int }{{100, 10}, {1000, 10}, {10000, 10}} {
		base := cluster(size.services, size.endpoints, 0)
		changed := []*model.Snapshot{cluster(size.services, size.endpoints, 1), cluster(size.services, size.endpoints, 2)}
		b.Run(fmt.Sprintf("services=%d/endpoints=%d/one-endpoint-changed", size.services, size.endpoints), func(b *testing.B) {
			ns := roottest.Netns(b, "svclabnftb")
			roottest.InNetns(b, ns, func() error {
				return benchmarkOneEndpointChanged(b, base, changed)
			})
		})
	}
}

// openKernelAndRenderer opens the IPv4 kube-proxy table of the calling
// thread's network namespace and a renderer of defaultOptions.
func openKernelAndRenderer() (*nftables.NetlinkFirst, *nftables.Renderer, error) {
	kernel, err := nftables.Open(knftables.IPv4Family)
	if err != nil {
		return nil, nil, err
	}
	r, err := nftables.NewRenderer(defaultOptions())
	return kernel, r, err
}

// benchmarkOneEndpointChanged runs BenchmarkSyncInTheKernel's loop in the
// calling thread's network namespace.
func benchmarkOneEndpointChanged(b *testing.B, base *model.Snapshot, changed []*model.Snapshot) error {
	ctx := context.Background()
	kernel, r, err := openKernelAndRenderer()
	if err != nil {
		return err
	}
	defer kernel.Close()
	batches := 0
	kernel.Observe = func(int) { batches++ }
	timed := &timedNFT{Interface: kernel}
	s := &nftables.Syncer{NFT: timed, Renderer: r}
	start := time.Now()
	if _, err := s.Sync(ctx, base); err != nil {
		return fmt.Errorf("first sync: %w", err)
	}
	cold := time.Since(start)
	timed.take()
	syncs := 0
	b.ResetTimer()
	for b.Loop() {
		res, err := s.Sync(ctx, changed[syncs%2])
		if err != nil {
			return err
		}
		if res.Full {
			return fmt.Errorf("sync %d was a full one; the benchmark times partial syncs", syncs)
		}
		syncs++
	}
	b.StopTimer()
	runs, writing := timed.take()
	if runs != syncs || batches != syncs {
		return fmt.Errorf("%d syncs ran %d transactions, %d of them over netlink; want one each, all over netlink", syncs, runs, batches)
	}
	b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
	b.ReportMetric(float64(writing.Nanoseconds())/float64(syncs), "kernel-ns/sync")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds()-writing.Nanoseconds())/float64(syncs), "go-ns/sync")
	return nil
}
