package ipvs

import (
	"fmt"
	"net/netip"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/model"
)

// bigSnapshot is n ClusterIP services with two endpoints each, every
// tenth also a NodePort.
func bigSnapshot(n int) *model.Snapshot {
	var sps []*model.ServicePort
	for i := range n {
		ip := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)})
		opts := []func(*model.ServicePort){eps(
			fmt.Sprintf("10.244.%d.%d:8080", i>>8, i&0xff),
			fmt.Sprintf("local:10.245.%d.%d:8080", i>>8, i&0xff),
		)}
		if i%10 == 0 {
			opts = append(opts, nodePort(int32(30000+i)))
		}
		sps = append(sps, sp("bench", fmt.Sprintf("svc-%04d", i), "http", corev1.ProtocolTCP, ip.String(), 80, opts...))
	}
	return snapshot(sps...)
}

// BenchmarkCompute is the desired state of 1000 services × 2 endpoints.
func BenchmarkCompute(b *testing.B) {
	snap, s := bigSnapshot(1000), baseSettings()
	b.ReportAllocs()
	for b.Loop() {
		Compute(snap, s)
	}
}

// BenchmarkDiffUnchanged is the steady state: nothing changed since the
// last sync.
func BenchmarkDiffUnchanged(b *testing.B) {
	d := Compute(bigSnapshot(1000), baseSettings())
	a := actualOf(d)
	b.ReportAllocs()
	for b.Loop() {
		if p := Diff(d, a, DiffOptions{AppliedIPTables: d.IPTables}); len(p) != 0 {
			b.Fatal("plan not empty")
		}
	}
}

// BenchmarkDiffOneEndpointMoved is one endpoint replaced in one service.
func BenchmarkDiffOneEndpointMoved(b *testing.B) {
	snap := bigSnapshot(1000)
	a := actualOf(Compute(snap, baseSettings()))
	snap.ServicePorts[501].Endpoints[0].IP = netip.MustParseAddr("10.250.0.1")
	d := Compute(snap, baseSettings())
	b.ReportAllocs()
	for b.Loop() {
		if p := Diff(d, a, DiffOptions{AppliedIPTables: d.IPTables}); len(p) != 2 {
			b.Fatalf("plan:\n%s", p)
		}
	}
}

// BenchmarkComputeAndDiffFromEmpty is the first sync's planning.
func BenchmarkComputeAndDiffFromEmpty(b *testing.B) {
	snap, s := bigSnapshot(1000), baseSettings()
	empty := &Actual{Sets: map[string]ActualSet{}}
	b.ReportAllocs()
	for b.Loop() {
		Diff(Compute(snap, s), empty, DiffOptions{})
	}
}

// BenchmarkSyncUnchangedFakeKernel is a whole steady-state Sync against
// the fake kernel (compute, read back, diff, apply nothing). The fake
// indexes its virtual and real servers by key, as the kernel hashes them,
// so this measures the backend, not the fake's lookups.
func BenchmarkSyncUnchangedFakeKernel(b *testing.B) {
	t := &testing.T{}
	be, _, _ := newTestBackend(t, Options{})
	snap := bigSnapshot(1000)
	if _, err := be.Sync(snap); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := be.Sync(snap); err != nil || res.Ops != 0 {
			b.Fatal(err, res.Ops)
		}
	}
}

// BenchmarkSyncColdFakeKernel is a first Sync into an empty fake kernel:
// every virtual server, real server and ipset entry is created. It grows
// linearly with the services (it was quadratic while the fake searched
// lists).
func BenchmarkSyncColdFakeKernel(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		snap := bigSnapshot(n)
		b.Run(fmt.Sprintf("services=%d/endpoints=2", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				be, _, _ := newTestBackend(&testing.T{}, Options{})
				b.StartTimer()
				if _, err := be.Sync(snap); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSyncAtScaleFakeKernel is a whole Sync at 10,000 Services × 10
// endpoints against the fake kernel, after a cold sync: nothing changed,
// one endpoint changed (back and forth), and the periodic full sync. It
// reports the kernel calls per sync (msgs/sync: each about one netlink
// request, see kernel.Calls) besides the time, which is mostly Compute
// and Diff over every Service: the kernel calls are what the cache of
// written state (written.go) keeps in proportion to the change.
func BenchmarkSyncAtScaleFakeKernel(b *testing.B) {
	const services, endpoints = 10_000, 10
	snap := scaleSnapshot(services, endpoints)
	moved := withEndpoint(snap, services/2+1, 3, "10.250.0.1") // a ClusterIP-only Service
	be, _, _ := newTestBackend(&testing.T{}, Options{})
	if _, err := be.Sync(snap); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, next func(i int) *model.Snapshot, before func()) {
		runSyncs(b, func(i int) (SyncResult, error) {
			before()
			return be.Sync(next(i))
		})
	}
	nothing := func() {}
	b.Run("unchanged", func(b *testing.B) {
		run(b, func(int) *model.Snapshot { return snap }, nothing)
	})
	b.Run("one-endpoint-changed", func(b *testing.B) {
		run(b, func(i int) *model.Snapshot {
			if i%2 == 0 {
				return moved
			}
			return snap
		}, nothing)
	})
	b.Run("full", func(b *testing.B) {
		run(b, func(int) *model.Snapshot { return snap }, be.ForceFullSync)
	})
}

// runSyncs runs sync in the benchmark loop (i counting from 0) and reports
// the kernel calls per sync (msgs/sync) and the process's CPU time per
// sync besides the time.
func runSyncs(b *testing.B, sync func(i int) (SyncResult, error)) {
	b.ReportAllocs()
	msgs, i := 0, 0
	cpu := processCPU(b)
	for b.Loop() {
		res, err := sync(i)
		if err != nil {
			b.Fatal(err)
		}
		msgs += res.Kernel.Total()
		i++
	}
	b.ReportMetric(float64(msgs)/float64(i), "msgs/sync")
	// On a busy machine ns/op is wall time shared with others; the
	// process's CPU time per sync is what the sync costs.
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(time.Millisecond)/float64(i), "cpu-ms/sync")
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
