package traffic

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestReportUniformOverObserved(t *testing.T) {
	res := &Result{Target: "10.96.0.10:80", Requested: 100, Attempted: 100, Succeeded: 98,
		Backends: map[string]int{"web-2": 40, "web-1": 58},
		Failures: map[FailureKind]int{FailureRefused: 2}}
	rep := res.Report()
	if rep.ExpectedFrom != "observed" || len(rep.Backends) != 2 || rep.Backends[0].Backend != "web-1" {
		t.Fatalf("report %+v", rep)
	}
	if b := rep.Backends[0]; b.Count != 58 || math.Abs(b.Share-58.0/98) > 1e-12 || b.Expected != 0.5 {
		t.Errorf("web-1 line %+v", b)
	}
	want := ChiSquarePValue([]float64{58, 40}, []float64{0.5, 0.5})
	if rep.PValue == nil || *rep.PValue != want || rep.DegreesOfFreedom != 1 {
		t.Errorf("p-value %v dof %d, want %g on 1", rep.PValue, rep.DegreesOfFreedom, want)
	}
	var table strings.Builder
	if err := rep.Write(&table, "table"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"10.96.0.10:80: 100 connections, 98 succeeded, 2 failed (refused 2)",
		"BACKEND  COUNT  SHARE  EXPECTED",
		"web-1    58     59.2%  50.0%",
		"web-2    40     40.8%  50.0%",
		"chi-square 3.306 on 1 degree of freedom: p-value 0.0690 (uniform over the observed backends)",
	} {
		if !strings.Contains(table.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, table.String())
		}
	}
}

func TestReportAgainstExpectedSet(t *testing.T) {
	res := &Result{Target: "10.96.0.10:80", Requested: 90, Attempted: 90, Succeeded: 90,
		Expected: []string{"web-1", "web-2", "web-3"},
		Backends: map[string]int{"web-1": 45, "web-2": 44, "stray": 1}}
	rep := res.Report()
	if strings.Join(rep.Missing, ",") != "web-3" || strings.Join(rep.Unexpected, ",") != "stray" {
		t.Errorf("missing %v unexpected %v", rep.Missing, rep.Unexpected)
	}
	if rep.PValue == nil || *rep.PValue != 0 || rep.ChiSquare != nil {
		t.Errorf("an unexpected backend must give p-value 0 and no finite statistic: %v %v", rep.PValue, rep.ChiSquare)
	}
	if len(rep.Backends) != 4 || rep.Backends[3].Backend != "stray" || rep.Backends[3].Expected != 0 {
		t.Errorf("backends %+v", rep.Backends)
	}

	// Without the stray one, the missing backend alone sinks the p-value.
	delete(res.Backends, "stray")
	res.Succeeded = 89
	rep = res.Report()
	if rep.PValue == nil || *rep.PValue > 1e-6 {
		t.Errorf("a missing backend out of 3 with 89 connections: p-value %v, want < 1e-6", rep.PValue)
	}

	var out strings.Builder
	if err := rep.Write(&out, "json"); err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal([]byte(out.String()), &decoded); err != nil {
		t.Fatalf("JSON %s: %v", out.String(), err)
	}
	for _, key := range []string{"target", "backends", "pValue", "chiSquare", "degreesOfFreedom", "missing", "failures", "expectedFrom"} {
		if _, ok := decoded[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, out.String())
		}
	}
	if err := rep.Write(&out, "yaml"); err == nil || !strings.Contains(err.Error(), `output format "yaml"`) {
		t.Errorf("Write yaml: %v", err)
	}
}

func TestReportNoSuccess(t *testing.T) {
	res := &Result{Target: "10.96.0.10:80", Requested: 5, Attempted: 5,
		Backends: map[string]int{}, Failures: map[FailureKind]int{FailureRefused: 5}}
	rep := res.Report()
	var out strings.Builder
	if err := rep.WriteJSON(&out); err != nil {
		t.Fatalf("JSON with no success: %v", err)
	}
	if !strings.Contains(out.String(), `"pValue": null`) {
		t.Errorf("JSON %s, want a null p-value", out.String())
	}
	out.Reset()
	rep.WriteTable(&out)
	if !strings.Contains(out.String(), "p-value: n/a") {
		t.Errorf("table %s", out.String())
	}
}
