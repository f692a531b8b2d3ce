package upstream

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/proxy/model/modeltest"
)

// speedSizes are the clusters compared: services × endpoints each.
// nftables: whether upstream's nftables proxier runs too (knftables.Fake
// takes minutes per sync at 10k×10, so only at the small size).
var speedSizes = []struct {
	services, endpoints, rounds, changes int
	nftables                             bool
}{
	{1000, 2, 7, 15, true},
	{10000, 10, 3, 9, false},
}

// rowNames are the measures, in the table's order. "full resync with
// re-list" pairs upstream's full sync with svclab's hourly resync, which
// also lists everything again into its model (upstream has no such step).
var rowNames = []string{"cold first sync", "full sync", "full resync with re-list", "one endpoint changed", "retained memory"}

// speedTargets are issue 13's targets for svclab/upstream at 10k×10.
var speedTargets = map[string]float64{"full sync": 0.3, "one endpoint changed": 0.1, "retained memory": 0.7}

// TestSpeedAgainstUpstream measures svclab's iptables path (event →
// model.Tracker → renderer → payload) and upstream kube-proxy v1.36.4's
// real iptables proxier (informer handlers → syncProxyRules → payload,
// behind a fake whose iptables-restore only records the size) on the same
// generated objects, interleaved in one process, and prints the ratio
// svclab/upstream with its min/median/max over the paired runs: cold first
// sync, forced full sync, one endpoint changed, and the heap retained after
// the first sync. Upstream's nftables proxier (behind knftables.Fake) is
// timed alone (svclab's nftables mode is not compared here).
//
// It is a measurement, not a test: it runs only with
// SVCLAB_BENCH_UPSTREAM=1 (make bench-upstream), and never fails on a
// number.
func TestSpeedAgainstUpstream(t *testing.T) {
	if os.Getenv("SVCLAB_BENCH_UPSTREAM") != "1" {
		t.Skip("a measurement: run with SVCLAB_BENCH_UPSTREAM=1 (make bench-upstream)")
	}
	requireNetns(t)
	var out strings.Builder
	fmt.Fprintf(&out, "svclab vs upstream kube-proxy v1.36.4, iptables mode, GOMAXPROCS=%d, ratio = svclab/upstream over paired runs\n", runtime.GOMAXPROCS(0))
	fmt.Fprintf(&out, "%-9s %-22s %12s %12s %8s %8s %8s %8s %s\n", "size", "measure", "upstream", "svclab", "min", "median", "max", "target", "distance")
	var nft strings.Builder
	for _, size := range speedSizes {
		label := fmt.Sprintf("%dk×%d", size.services/1000, size.endpoints)
		m, err := measureSize(size.services, size.endpoints, size.rounds, size.changes, size.nftables)
		if err != nil {
			t.Fatal(err)
		}
		var rows strings.Builder
		for _, name := range rowNames {
			fmt.Fprintln(&rows, m.row(label, name, size.services == 10000))
		}
		t.Logf("%s done:\n%s", label, rows.String())
		out.WriteString(rows.String())
		if !size.nftables {
			continue
		}
		fmt.Fprintf(&nft, "%-9s upstream nftables (knftables.Fake): cold %s, full %s, one endpoint changed %s, retained %s\n", label,
			m.nft["cold first sync"].median(false), m.nft["full sync"].median(false), m.nft["one endpoint changed"].median(false), m.nft["retained memory"].median(true))
	}
	fmt.Print(out.String() + nft.String())
}

// series are paired samples: upstream's and svclab's of the same round.
type series struct{ upstream, svclab []float64 }

func (s *series) add(u, v float64) {
	s.upstream = append(s.upstream, u)
	s.svclab = append(s.svclab, v)
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// samples are one side's values, for the nftables line.
type samples []float64

func (s samples) median(bytes bool) string { return format(median(s), bytes) }

func format(v float64, bytes bool) string {
	if bytes {
		return strconv.FormatFloat(v/(1<<20), 'f', 1, 64) + " MiB"
	}
	return time.Duration(v).Round(10 * time.Microsecond).String()
}

type measurements struct {
	pairs map[string]*series
	nft   map[string]samples
}

func (m *measurements) row(size, name string, withTarget bool) string {
	s := m.pairs[name]
	var ratios []float64
	for i := range s.upstream {
		ratios = append(ratios, s.svclab[i]/s.upstream[i])
	}
	bytes := name == "retained memory"
	target, distance := "", ""
	if t, ok := speedTargets[name]; ok && withTarget {
		target = fmt.Sprintf("≤%.2f", t)
		if med := median(ratios); med <= t {
			distance = "met"
		} else {
			distance = fmt.Sprintf("%.2fx over", med/t)
		}
	}
	return fmt.Sprintf("%-9s %-22s %12s %12s %8.2f %8.2f %8.2f %8s %s", size, name,
		format(median(s.upstream), bytes), format(median(s.svclab), bytes),
		slices.Min(ratios), median(ratios), slices.Max(ratios), target, distance)
}

// measureSize runs the rounds for one cluster size. Each round builds all
// three proxies from nothing (cold first sync, retained heap), then
// alternates changes and forced full syncs; which side goes first
// alternates too. A GC runs before every timed step, outside the timing.
func measureSize(services, endpoints, rounds, changes int, withNFT bool) (*measurements, error) {
	svcs, sls := modeltest.Cluster(services, endpoints)
	mid := len(sls) / 2
	variants := []*discoveryv1.EndpointSlice{
		modeltest.WithEndpointChanged(sls[mid], 1<<20), modeltest.WithEndpointChanged(sls[mid], 1<<20+1),
	}
	m := &measurements{pairs: map[string]*series{}, nft: map[string]samples{}}
	for _, n := range rowNames {
		m.pairs[n] = &series{}
	}
	for round := range rounds {
		up, err := newUpstreamIPTables()
		if err != nil {
			return nil, err
		}
		sv, err := newSvclabPath()
		if err != nil {
			return nil, err
		}
		var nf *upstreamNFTablesProxier
		if withNFT {
			if nf, err = newUpstreamNFTables(); err != nil {
				return nil, err
			}
		}
		var upCold, svCold, nfCold time.Duration
		var upHeap, svHeap, nfHeap float64
		var svErr error
		steps := []func(){
			func() { upCold, upHeap = timedRetained(func() { up.cold(svcs, sls) }) },
			func() { svCold, svHeap = timedRetained(func() { svErr = sv.cold(svcs, sls) }) },
		}
		if round%2 == 1 {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, s := range steps {
			s()
		}
		if nf != nil {
			nfCold, nfHeap = timedRetained(func() { nf.cold(svcs, sls) })
		}
		if svErr != nil {
			return nil, svErr
		}
		if up.ipt.bytes == 0 || sv.kernel.bytes == 0 {
			return nil, fmt.Errorf("a first sync wrote nothing (upstream %d bytes, svclab %d)", up.ipt.bytes, sv.kernel.bytes)
		}
		m.pairs["cold first sync"].add(float64(upCold), float64(svCold))
		m.pairs["retained memory"].add(upHeap, svHeap)
		m.nft["cold first sync"] = append(m.nft["cold first sync"], float64(nfCold))
		m.nft["retained memory"] = append(m.nft["retained memory"], nfHeap)

		current := sls[mid]
		for i := range changes {
			next := variants[i%2]
			old := current
			u := timed(func() { up.changed(old, next) })
			v := timed(func() { svErr = sv.changed(next) })
			var w time.Duration
			if nf != nil {
				w = timed(func() { nf.changed(old, next) })
			}
			current = next
			if svErr != nil {
				return nil, svErr
			}
			m.pairs["one endpoint changed"].add(float64(u), float64(v))
			m.nft["one endpoint changed"] = append(m.nft["one endpoint changed"], float64(w))
			if i%3 == 0 {
				var upErr, nfErr error
				u := timed(func() { upErr = up.full() })
				v := timed(func() { svErr = sv.full() })
				var w time.Duration
				if nf != nil {
					w = timed(func() { nfErr = nf.full() })
				}
				for _, err := range []error{upErr, svErr, nfErr} {
					if err != nil {
						return nil, err
					}
				}
				m.pairs["full sync"].add(float64(u), float64(v))
				r := timed(func() { svErr = sv.resync(svcs, sls) })
				if svErr != nil {
					return nil, svErr
				}
				m.pairs["full resync with re-list"].add(float64(u), float64(r))
				m.nft["full sync"] = append(m.nft["full sync"], float64(w))
			}
		}
		runtime.KeepAlive(up)
		runtime.KeepAlive(sv)
		runtime.KeepAlive(nf)
	}
	return m, nil
}

func timed(f func()) time.Duration {
	runtime.GC()
	start := time.Now()
	f()
	return time.Since(start)
}

// timedRetained times f and measures the heap it leaves reachable (the
// objects themselves were allocated before: an informer's cache holds
// them for either proxy).
func timedRetained(f func()) (time.Duration, float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	d := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	return d, float64(after.HeapAlloc) - float64(before.HeapAlloc)
}
