package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/golden"
)

// sample is a result with every kind of row: measured in two modes at two
// sizes, a mode skipped, a measurement that failed, and a stop.
func sample() *Result {
	timedBy := func(mode string) string {
		if mode == "nftables" {
			return "probe"
		}
		return "proxy"
	}
	lat := func(p50, p99 float64) *Latency {
		return &Latency{Service: "default/bench-00001", Target: "10.96.16.1:80", From: "bench-client-x", N: 200, P50Ms: p50, P99Ms: p99, MaxMs: p99 * 1.5}
	}
	run := func(mode string, n int, total, store, p99 float64) Run {
		return Run{Mode: mode, Services: n,
			Programming: &Programming{TotalMs: total, StoreMs: store, ProxyMs: total - store, TimedBy: timedBy(mode), ResolutionMs: 20, RuleFound: true,
				Probe: "iptables -t nat -S KUBE-SVC-X", KernelObjects: 8 * n},
			Early: lat(0.05, 0.2), Late: lat(0.06, p99), CPU: &CPU{ProxySeconds: 0.5, ChildrenSeconds: 1.25},
			Notes: []string{"program: iptables-restore of rules", "first packet: linear walk"}}
	}
	return &Result{
		Machine: Machine{CPUs: 2, Kernel: "6.18.44", IPTables: "iptables v1.8.9 (nf_tables)"},
		Config:  Config{Services: []int{100, 2000}, Modes: []string{"iptables", "nftables", "ipvs"}, Connections: 200, TimeoutMs: 600000},
		Runs: []Run{
			run("iptables", 100, 412, 35, 0.25),
			run("nftables", 100, 300, 35, 0.2),
			{Mode: "ipvs", Services: 100, Skipped: "ipvs: needs IPVS (this kernel lacks it; run under `svclab vm run`)"},
			run("iptables", 2000, 16080, 9280, 0.85),
			{Mode: "nftables", Services: 2000, Error: "--timeout 10m0s reached: lab x: interrupted\nmore"},
			{Mode: "ipvs", Services: 2000, Skipped: "ipvs: needs IPVS (this kernel lacks it; run under `svclab vm run`)"},
		},
		Stopped:   "--timeout 10m0s reached",
		ElapsedMs: 600000,
	}
}

func TestRenderersMatchGoldens(t *testing.T) {
	for _, tc := range []struct {
		file  string
		write func(io.Writer, *Result) error
	}{
		{"table.golden", WriteTable},
		{"result.json.golden", WriteJSON},
		{"plot.svg.golden", WriteSVG},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, sample()); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.file, b.Bytes())
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, name, got)
}

// TestSVGIsWellFormedXML parses the plot with encoding/xml and checks it
// draws a line per measured mode and names the skipped ones.
func TestSVGIsWellFormedXML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSVG(&b, sample()); err != nil {
		t.Fatal(err)
	}
	counts := wellFormed(t, b.Bytes())
	// Two panels × two measured modes.
	if counts["polyline"] != 2+2*2 { // two axes, four data lines
		t.Errorf("%d polylines, want 6 (2 axes + 2 modes × 2 panels)", counts["polyline"])
	}
	// iptables has 2 points per panel, nftables 1.
	if counts["circle"] != 2*(2+1) {
		t.Errorf("%d circles, want 6", counts["circle"])
	}
	if !bytes.Contains(b.Bytes(), []byte("ipvs (100 Services): ipvs: needs IPVS")) {
		t.Error("the skipped mode is not named")
	}
}

// wellFormed decodes doc as XML to the end and counts its elements by name.
func wellFormed(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
	if counts["svg"] != 1 {
		t.Fatalf("%d svg elements, want 1", counts["svg"])
	}
	return counts
}

// TestSummarizeQuantiles checks p50, p99 and max on 200 samples 1…200 µs:
// the empirical quantile is the smallest sample at or above the fraction.
func TestSummarizeQuantiles(t *testing.T) {
	var s []time.Duration
	for i := 200; i >= 1; i-- { // unsorted on purpose
		s = append(s, time.Duration(i)*time.Microsecond)
	}
	l := Summarize(s, 3)
	if l.N != 200 || l.Failures != 3 {
		t.Errorf("N=%d failures=%d, want 200, 3", l.N, l.Failures)
	}
	if l.P50Ms != 0.100 || l.P99Ms != 0.198 || l.MaxMs != 0.200 {
		t.Errorf("p50=%v p99=%v max=%v ms, want 0.1, 0.198, 0.2", l.P50Ms, l.P99Ms, l.MaxMs)
	}
	if s[0] != 200*time.Microsecond {
		t.Error("Summarize sorted its argument")
	}
	if empty := Summarize(nil, 5); empty.N != 0 || empty.P99Ms != 0 || empty.Failures != 5 {
		t.Errorf("no samples: %+v", empty)
	}
}
