package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// trafficSample is a traffic result with every kind of row: two modes at
// two parallelisms, one where the Service's path is within the spread,
// one with failures and a CPU-bound client, a skipped mode, a failed one.
func trafficSample() *TrafficResult {
	sample := func(rate, p50, p99, cpuUs float64, failed int) TrafficSample {
		const n = 20000
		elapsed := n / rate
		return TrafficSample{Attempted: n, Succeeded: n - failed, ElapsedMs: 1000 * elapsed, ConnsPerSecond: float64(n-failed) / elapsed,
			ConnectP50Ms: p50, ConnectP99Ms: p99, CPUSeconds: cpuUs * n / 1e6, CPUPerConnUs: cpuUs,
			SystemSeconds: cpuUs * n / 2e6, SystemPerConnUs: cpuUs / 2}
	}
	cut := func(s TrafficSample) TrafficSample {
		s.DeadlineExceeded = true
		return s
	}
	path := func(target string, samples ...TrafficSample) *TrafficPath {
		p := &TrafficPath{Target: target, From: "bench-client-7d9f", Samples: samples, StartCPUMs: 4.2}
		p.Summarize()
		return p
	}
	run := func(mode string, par int, cluster, pod *TrafficPath) TrafficRun {
		r := TrafficRun{Mode: mode, Parallelism: par, ClusterIP: cluster, PodIP: pod}
		r.Compare(2)
		return r
	}
	const svc, pod = "10.96.16.0:80", "10.244.1.3:8080"
	res := &TrafficResult{
		Machine: Machine{CPUs: 2, Kernel: "6.18.44", IPTables: "iptables v1.8.9 (nf_tables)"},
		Config: TrafficConfig{Modes: []string{"iptables", "nftables", "ipvs"}, Services: 1000, Connections: 20000, Parallelism: []int{1, 8},
			Repetitions: 3, RunDeadlineMs: 60000, TimeoutMs: 600000},
		Runs: []TrafficRun{
			run("iptables", 1,
				path(svc, sample(2000, 0.110, 0.300, 180, 0), sample(1900, 0.115, 0.320, 185, 0), sample(2100, 0.105, 0.290, 178, 0)),
				path(pod, sample(2400, 0.080, 0.250, 170, 0), sample(2300, 0.085, 0.260, 172, 0), sample(2450, 0.079, 0.240, 169, 0))),
			run("iptables", 8,
				path(svc, cut(sample(5000, 0.9, 4.1, 380, 2)), sample(5200, 0.85, 3.9, 376, 0), sample(4900, 0.95, 4.4, 384, 0)),
				path(pod, sample(5100, 0.8, 3.8, 370, 0), sample(5000, 0.82, 3.7, 372, 0), sample(5050, 0.81, 3.9, 368, 0))),
			run("nftables", 1,
				path(svc, sample(2050, 0.108, 0.295, 181, 0)),
				path(pod, sample(2380, 0.081, 0.251, 171, 0))),
			{Mode: "nftables", Parallelism: 8, Error: "--timeout 10m0s reached: traffic from bench-client-7d9f: killed\nmore"},
			{Mode: "ipvs", Parallelism: 1, Skipped: "ipvs: needs IPVS (this kernel lacks it; run under `svclab vm run`)"},
			{Mode: "ipvs", Parallelism: 8, Skipped: "ipvs: needs IPVS (this kernel lacks it; run under `svclab vm run`)"},
		},
		Stopped:   "--timeout 10m0s reached",
		ElapsedMs: 600000,
	}
	return res
}

func TestTrafficRenderersMatchGoldens(t *testing.T) {
	for _, tc := range []struct {
		file  string
		write func(io.Writer, *TrafficResult) error
	}{
		{"traffic_table.golden", WriteTrafficTable},
		{"traffic.json.golden", WriteTrafficJSON},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, trafficSample()); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.file, b.Bytes())
		})
	}
}

// TestTrafficJSONReadsBack decodes the JSON into the same result.
func TestTrafficJSONReadsBack(t *testing.T) {
	var b bytes.Buffer
	want := trafficSample()
	if err := WriteTrafficJSON(&b, want); err != nil {
		t.Fatal(err)
	}
	var got TrafficResult
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteTrafficJSON(&again, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Error("the JSON does not read back to the same result")
	}
}

func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{5}, Spread{N: 1, Min: 5, Median: 5, Max: 5}},
		{[]float64{3, 1, 2}, Spread{N: 3, Min: 1, Median: 2, Max: 3}},
		{[]float64{4, 1, 3, 2}, Spread{N: 4, Min: 1, Median: 2.5, Max: 4}},
	} {
		in := append([]float64(nil), tc.in...)
		if got := SpreadOf(in); got != tc.want {
			t.Errorf("SpreadOf(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("SpreadOf modified its input: %v", in)
		}
	}
}

// TestNewTrafficSample checks the rate, the quantiles and the CPU per
// connection of 100 connects 1…100 µs, 4 failed, in 50 ms with 20 ms CPU.
func TestNewTrafficSample(t *testing.T) {
	var connects []time.Duration
	for i := 1; i <= 100; i++ {
		connects = append(connects, time.Duration(101-i)*time.Microsecond)
	}
	s := NewTrafficSample(connects, 104, 50*time.Millisecond, ProcessCPU{User: 15 * time.Millisecond, System: 5 * time.Millisecond}, false)
	want := TrafficSample{Attempted: 104, Succeeded: 100, ElapsedMs: 50, ConnsPerSecond: 2000,
		ConnectP50Ms: 0.050, ConnectP99Ms: 0.099, CPUSeconds: 0.02, CPUPerConnUs: 20000.0 / 104, SystemSeconds: 0.005, SystemPerConnUs: 5000.0 / 104}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if got := s.ClientCores(); math.Abs(got-0.4) > 1e-12 {
		t.Errorf("client cores %g, want 0.4", got)
	}
	if empty := NewTrafficSample(nil, 0, 0, ProcessCPU{}, true); empty.ConnsPerSecond != 0 || empty.CPUPerConnUs != 0 || empty.ClientCores() != 0 {
		t.Errorf("an empty run: %+v", empty)
	}
	// A run whose CPU time was below the start-up's least.
	cpu := ProcessCPU{User: time.Millisecond, System: 3 * time.Millisecond}.Less(ProcessCPU{User: 2 * time.Millisecond, System: time.Millisecond})
	if cpu != (ProcessCPU{System: 2 * time.Millisecond}) {
		t.Errorf("Less = %+v, want user 0 (not negative), system 2ms", cpu)
	}
}

// TestTrafficNotesSayWhatDominates checks the notes of the sample's rows:
// a clear Service share, one within the spread, a CPU-bound client.
func TestTrafficNotesSayWhatDominates(t *testing.T) {
	runs := trafficSample().Runs
	for _, tc := range []struct {
		run  TrafficRun
		want []string
	}{
		{runs[0], []string{"the Service's path: 16.7% of the time per connection (14.3%–17.4% over 3 repetitions)", "180µs per connection through the cluster IP (90µs of it system), 170µs to the pod IP (85µs system)"}},
		{runs[1], []string{"no difference in rate beyond the spread (cluster IP at 0.98× the pod IP's rate", "the Service's path in the client's CPU: +10µs per connection (+4µs to +16µs over 3 repetitions)", "CPU-bound", "failed connections: 2 through the cluster IP, 0 to the pod IP", "1 of 6 runs stopped at the run deadline"}},
		{runs[2], []string{"(one repetition: no spread)", "the Service's path in the client's CPU: +10µs per connection (one repetition)"}},
	} {
		got := strings.Join(tc.run.Notes, "; ")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s ×%d: notes %q lack %q", tc.run.Mode, tc.run.Parallelism, got, w)
			}
		}
	}
	if runs[0].Notes != nil && strings.Contains(strings.Join(runs[0].Notes, ";"), "CPU-bound") {
		t.Errorf("parallelism 1 at 0.36 CPUs called CPU-bound: %q", runs[0].Notes)
	}
}

// TestTrafficNotesBlameTheMachine checks a run whose cluster IP beat the
// pod IP in every repetition: the notes say the machine's load set the
// rates, not that the Service's path took a negative share.
func TestTrafficNotesBlameTheMachine(t *testing.T) {
	path := func(rates ...float64) *TrafficPath {
		p := &TrafficPath{}
		for _, r := range rates {
			p.Samples = append(p.Samples, TrafficSample{Attempted: 100, Succeeded: 100, ElapsedMs: 1e5 / r, ConnsPerSecond: r, CPUPerConnUs: 100})
		}
		p.Summarize()
		return p
	}
	r := TrafficRun{Mode: "nftables", Parallelism: 1, ClusterIP: path(2600, 2700, 1700), PodIP: path(1400, 1500, 1450)}
	r.Compare(2)
	got := strings.Join(r.Notes, "; ")
	if !strings.Contains(got, "the cluster IP ran faster than the pod IP in every repetition (1.80×, 1.17–1.86 over 3)") || strings.Contains(got, "of the time per connection") {
		t.Errorf("notes %q", got)
	}
}

// TestTrafficNotesSayThePodIPIsNoBaselineInIPVS: in IPVS mode a pod IP
// slower than the cluster IP, or failing, is IPVS's connection table
// (kubernetes#90042), not the machine's load, and the notes say so.
func TestTrafficNotesSayThePodIPIsNoBaselineInIPVS(t *testing.T) {
	path := func(failed int, rates ...float64) *TrafficPath {
		p := &TrafficPath{}
		for _, r := range rates {
			p.Samples = append(p.Samples, TrafficSample{Attempted: 100, Succeeded: 100 - failed, ElapsedMs: 1e5 / r, ConnsPerSecond: r, CPUPerConnUs: 100})
		}
		p.Summarize()
		return p
	}
	slower := TrafficRun{Mode: "ipvs", Parallelism: 1, ClusterIP: path(0, 164, 145, 172), PodIP: path(22, 16, 15, 58)}
	slower.Compare(2)
	got := strings.Join(slower.Notes, "; ")
	if !strings.Contains(got, "the cluster IP ran faster than the pod IP in every repetition") || !strings.Contains(got, "kubernetes#90042") ||
		strings.Contains(got, "the machine's other load") {
		t.Errorf("ipvs, pod IP slower: notes %q", got)
	}
	failing := TrafficRun{Mode: "ipvs", Parallelism: 1, ClusterIP: path(0, 100, 110, 105), PodIP: path(1, 120, 130, 125)}
	failing.Compare(2)
	if got := strings.Join(failing.Notes, "; "); !strings.Contains(got, "failed connections: 0 through the cluster IP, 3 to the pod IP — in IPVS mode the pod IP is no baseline") {
		t.Errorf("ipvs, pod IP failing: notes %q", got)
	}
	same := TrafficRun{Mode: "iptables", Parallelism: 1, ClusterIP: path(0, 100, 110, 105), PodIP: path(1, 120, 130, 125)}
	same.Compare(2)
	if got := strings.Join(same.Notes, "; "); strings.Contains(got, "kubernetes#90042") {
		t.Errorf("iptables: notes %q blame IPVS", got)
	}
}

func TestFmtSignedUs(t *testing.T) {
	for us, want := range map[float64]string{12.4: "+12µs", -3: "-3µs", -0.3: "0µs", 0.2: "0µs", 0: "0µs", 1500: "+1.50ms"} {
		if got := fmtSignedUs(us); got != want {
			t.Errorf("fmtSignedUs(%g) = %q, want %q", us, got, want)
		}
	}
}
