package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/bench"
	"github.com/svclab/svclab/tools/bench/report"
)

// TestIntegrationDataplaneBench runs the benchmark at tiny sizes in every
// mode and checks the structure and sanity of what it reports, never its
// timings: every mode this kernel has is measured (ipvs is skipped, saying
// why, where the kernel lacks IPVS), the last Service's rule was found,
// times and latencies are positive, every connection succeeded, CPU
// times are not negative, the notes say what dominates; the renderers take
// the result; no lab and no namespace is left behind.
func TestIntegrationDataplaneBench(t *testing.T) {
	roottest.Require(t, "builds labs (network namespaces, iptables, nftables)")
	modes, err := bench.ParseModes("iptables-legacy,iptables-nft,nftables,ipvs")
	if err != nil {
		t.Fatal(err)
	}
	const conns = 20
	res, err := bench.Run(context.Background(), bench.Options{
		Services: []int{10, 20}, Modes: modes, Connections: conns, Timeout: 8 * time.Minute,
		Lab: netns.Options{Binary: roottest.SharedBinary(t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != "" || len(res.Runs) != 2*len(modes) {
		t.Fatalf("stopped %q with %d runs, want all %d", res.Stopped, len(res.Runs), 2*len(modes))
	}
	for _, run := range res.Runs {
		if run.Mode == "ipvs" && run.Skipped != "" {
			if !strings.Contains(run.Skipped, "needs IPVS") {
				t.Errorf("ipvs skipped for another reason: %s", run.Skipped)
			}
			continue
		}
		if !run.Measured() {
			t.Errorf("%s/%d not measured: skipped %q, error %q", run.Mode, run.Services, run.Skipped, run.Error)
			continue
		}
		p := run.Programming
		if !p.RuleFound || p.TotalMs <= 0 || p.ProxyMs <= 0 || p.StoreMs <= 0 || p.KernelObjects <= 0 || p.Probe == "" {
			t.Errorf("%s/%d: programming %+v", run.Mode, run.Services, *p)
		}
		for _, l := range []*report.Latency{run.Early, run.Late} {
			if l == nil || l.N != conns || l.Failures != 0 || l.P50Ms <= 0 || l.P99Ms < l.P50Ms || l.MaxMs < l.P99Ms {
				t.Errorf("%s/%d: latency %+v", run.Mode, run.Services, l)
			}
		}
		if run.Late != nil && !strings.HasSuffix(run.Late.Service, fmt.Sprintf("bench-%05d", run.Services-1)) {
			t.Errorf("%s/%d: late Service %s is not the last", run.Mode, run.Services, run.Late.Service)
		}
		if run.CPU == nil || run.CPU.ProxySeconds < 0 || run.CPU.ChildrenSeconds < 0 {
			t.Errorf("%s/%d: CPU %+v", run.Mode, run.Services, run.CPU)
		}
		if len(run.Notes) < 2 {
			t.Errorf("%s/%d: notes %q", run.Mode, run.Services, run.Notes)
		}
	}
	checkRenders(t, res)
	checkNothingLeft(t)
}

func checkRenders(t *testing.T, res *report.Result) {
	t.Helper()
	var js bytes.Buffer
	if err := report.WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	var back report.Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Runs) != len(res.Runs) {
		t.Errorf("JSON does not read back: %v", err)
	}
	var svg bytes.Buffer
	if err := report.WriteSVG(&svg, res); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&svg)
	for {
		if _, err := dec.Token(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("SVG: %v", err)
		}
	}
	if err := report.WriteTable(io.Discard, res); err != nil {
		t.Fatal(err)
	}
}

// checkNothingLeft fails for a benchmark lab or namespace still there.
func checkNothingLeft(t *testing.T) {
	t.Helper()
	names, err := netns.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "dpbench-") {
			t.Errorf("lab %s left behind", n)
		}
	}
	out, err := exec.Command(hostprog.IP, "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "svclab-dpbench-") {
		t.Errorf("namespaces left behind:\n%s", out)
	}
}
