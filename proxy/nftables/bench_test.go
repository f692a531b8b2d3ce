package nftables_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/model/modeltest"
	"github.com/svclab/svclab/proxy/nftables"
)

// nullKernel accepts every transaction and holds nothing: the benchmarks
// time svclab's side of a sync (reading, rendering, the transaction's
// text), not knftables.Fake, which copies its whole table on every Run.
type nullKernel struct{ *knftables.Fake }

func (nullKernel) Run(context.Context, *knftables.Transaction) error { return nil }

func (nullKernel) ListAll(context.Context) (map[string][]string, error) {
	return map[string][]string{}, nil
}

func (nullKernel) ListElements(context.Context, string, string) ([]*knftables.Element, error) {
	return nil, nil
}

// processCPU is the process's user and system CPU time in nanoseconds: on
// a loaded machine it says more than the wall time (ns/op).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkSync times Syncer.Sync at 10,000 Services × 10 endpoints
// (modeltest.Cluster) after a first full sync: one endpoint changed (two
// snapshots in turn), nothing changed, and a full sync (the hourly one).
// It reports the nft execs, listings and transaction operations per sync,
// and the process's CPU time per sync (garbage collection included).
func BenchmarkSync(b *testing.B) {
	const services, endpoints = 10000, 10
	base, changed := cluster(services, endpoints, 0), []*model.Snapshot{cluster(services, endpoints, 1), cluster(services, endpoints, 2)}
	cases := []struct {
		name  string
		force bool
		snap  func(i int) *model.Snapshot
	}{
		{"one-endpoint-changed", false, func(i int) *model.Snapshot { return changed[i%2] }},
		{"nothing-changed", false, func(int) *model.Snapshot { return base }},
		{"full", true, func(int) *model.Snapshot { return base }},
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("services=%d/endpoints=%d/%s", services, endpoints, c.name), func(b *testing.B) {
			r, err := nftables.NewRenderer(defaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			counter := &countingNFT{Interface: nullKernel{knftables.NewFake(knftables.IPv4Family, nftables.TableName)}}
			s := &nftables.Syncer{NFT: counter, Renderer: r}
			if _, err := s.Sync(context.Background(), base); err != nil {
				b.Fatal(err)
			}
			counter.take()
			b.ReportAllocs()
			syncs, cpuBefore := 0, processCPU()
			for b.Loop() {
				if c.force {
					s.ForceFull()
				}
				if _, err := s.Sync(context.Background(), c.snap(syncs)); err != nil {
					b.Fatal(err)
				}
				syncs++
			}
			calls := counter.take()
			b.ReportMetric(float64(processCPU()-cpuBefore)/float64(syncs), "cpu-ns/sync")
			b.ReportMetric(float64(calls.Execs())/float64(syncs), "execs/sync")
			b.ReportMetric(float64(calls.Listings())/float64(syncs), "listings/sync")
			b.ReportMetric(float64(calls.Operations)/float64(syncs), "ops/sync")
		})
	}
}

// BenchmarkSyncTracker is BenchmarkSync's partial syncs with the proxy
// loop's snapshots, a model.Tracker's at 10,000 Services × 10 endpoints:
// under their StablePointers promise an unchanged service port is known
// by its pointer, not compared.
func BenchmarkSyncTracker(b *testing.B) {
	const services, endpoints = 10000, 10
	svcs, slices := modeltest.Cluster(services, endpoints)
	for _, c := range []struct {
		name   string
		change func(tr *model.Tracker, i int)
	}{
		{"one-endpoint-changed", func(tr *model.Tracker, i int) {
			tr.SetEndpointSlice(modeltest.WithEndpointChanged(slices[services/2], 1<<20+i))
		}},
		{"nothing-changed", func(*model.Tracker, int) {}},
	} {
		b.Run(fmt.Sprintf("services=%d/endpoints=%d/%s", services, endpoints, c.name), func(b *testing.B) {
			tr := model.NewTracker(corev1.IPv4Protocol, modeltest.NodeName)
			for i := range svcs {
				tr.SetService(svcs[i])
				tr.SetEndpointSlice(slices[i])
			}
			r, err := nftables.NewRenderer(defaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			s := &nftables.Syncer{NFT: nullKernel{knftables.NewFake(knftables.IPv4Family, nftables.TableName)}, Renderer: r}
			if _, err := s.Sync(context.Background(), tr.Snapshot()); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			syncs, cpuBefore := 0, processCPU()
			for b.Loop() {
				c.change(tr, syncs)
				if _, err := s.Sync(context.Background(), tr.Snapshot()); err != nil {
					b.Fatal(err)
				}
				syncs++
			}
			b.ReportMetric(float64(processCPU()-cpuBefore)/float64(syncs), "cpu-ns/sync")
		})
	}
}
