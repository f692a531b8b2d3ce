package traffic

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestParseExpected(t *testing.T) {
	names, shares, err := ParseExpected([]string{"web-a=2", "web-b", " web-c = 1.0 "})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "web-a,web-b,web-c" || shares["web-a"] != 0.5 || shares["web-b"] != 0.25 || shares["web-c"] != 0.25 {
		t.Errorf("names %v, shares %v; want web-a 1/2, web-b and web-c 1/4", names, shares)
	}
	for _, bad := range [][]string{{"a=0"}, {"a=-1"}, {"a=x"}, {"=1"}, {"a", "a=2"}, {"a=+Inf"}, {"a=NaN"}, {""}} {
		if _, _, err := ParseExpected(bad); err == nil {
			t.Errorf("ParseExpected(%q): no error", bad)
		}
	}
	if _, err := (Options{Target: "1.2.3.4:80", Connections: 1, Expected: []string{"a=0"}}).withDefaults(); err == nil {
		t.Error("Options with --expect a=0: no error")
	}
	if _, err := (Options{Target: "1.2.3.4:80", Connections: 1, Alpha: 1}).withDefaults(); err == nil {
		t.Error("Options with alpha 1: no error")
	}
}

func weightedResult(counts map[string]int, expect ...string) *Result {
	r := &Result{Target: "10.96.0.10:80", Backends: counts, Expected: expect}
	for _, n := range counts {
		r.Requested += n
		r.Attempted += n
		r.Succeeded += n
	}
	return r
}

// TestReportAgainstWeights: the chi-square test of a weighted split, with
// the numbers worked by hand. 400/200 against 2:1 is exactly the
// expected split (statistic 0, p 1); 300/300 against 2:1 gives
// (300−400)²/400 + (300−200)²/200 = 25 + 50 = 75 on 1 degree of freedom,
// p = 4.5e-18: a fail at the default alpha 1e-6.
func TestReportAgainstWeights(t *testing.T) {
	rep := weightedResult(map[string]int{"a": 400, "b": 200}, "a=2", "b=1").Report()
	if *rep.ChiSquare != 0 || *rep.PValue != 1 || !rep.Passed() || rep.Alpha != DefaultAlpha {
		t.Errorf("400/200 against 2:1: chi-square %v, p %v, verdict %s at %g; want 0, 1, pass at 1e-6", *rep.ChiSquare, *rep.PValue, rep.Verdict, rep.Alpha)
	}
	if rep.Backends[0].Expected != 2.0/3 || rep.Backends[1].Expected != 1.0/3 {
		t.Errorf("expected shares %v, %v; want 2/3, 1/3", rep.Backends[0].Expected, rep.Backends[1].Expected)
	}
	rep = weightedResult(map[string]int{"a": 300, "b": 300}, "a=2", "b=1").Report()
	if math.Abs(*rep.ChiSquare-75) > 1e-9 || rep.DegreesOfFreedom != 1 || math.Abs(*rep.PValue-4.5e-18)/4.5e-18 > 0.05 {
		t.Errorf("300/300 against 2:1: chi-square %v on %d, p %v; want 75 on 1, p 4.5e-18", *rep.ChiSquare, rep.DegreesOfFreedom, *rep.PValue)
	}
	if rep.Passed() || !strings.Contains(rep.VerdictReason, "below alpha 1e-06") {
		t.Errorf("300/300 against 2:1: verdict %s (%s), want a fail below alpha", rep.Verdict, rep.VerdictReason)
	}
}

func TestReportVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      *Result
		reason string
	}{
		{"no success", &Result{Requested: 5, Attempted: 5, Backends: map[string]int{}}, "no connection succeeded"},
		{"a failure", &Result{Requested: 5, Attempted: 5, Succeeded: 4, Backends: map[string]int{"a": 4}, Failures: map[FailureKind]int{FailureKinds[0]: 1}}, "1 of 5 connections failed"},
		{"deadline", &Result{Requested: 5, Attempted: 4, Succeeded: 4, Backends: map[string]int{"a": 4}, DeadlineExceeded: true}, "after 4 of 5"},
		{"unexpected backend", weightedResult(map[string]int{"a": 4, "b": 1}, "a"), "not split as expected"},
	} {
		rep := tc.r.Report()
		if rep.Passed() || !strings.Contains(rep.VerdictReason, tc.reason) {
			t.Errorf("%s: verdict %s (%s), want a fail saying %q", tc.name, rep.Verdict, rep.VerdictReason, tc.reason)
		}
	}
	r := weightedResult(map[string]int{"a": 60, "b": 40})
	r.Alpha = 0.1
	if rep := r.Report(); rep.Passed() || rep.Alpha != 0.1 {
		t.Errorf("60/40 at alpha 0.1 (p 0.046): verdict %s at %g, want a fail at 0.1", rep.Verdict, rep.Alpha)
	}
}

// exactRejection is the exact probability that the chi-square test at
// alpha rejects n connections over two backends against expected shares,
// when each goes to the first backend with probability actual: the sum of
// the binomial probabilities of the counts it rejects.
func exactRejection(n int, alpha float64, expected []float64, actual float64) float64 {
	b := distuv.Binomial{N: float64(n), P: actual}
	var sum float64
	for k := 0; k <= n; k++ {
		if ChiSquarePValue([]float64{float64(k), float64(n - k)}, expected) < alpha {
			sum += b.Prob(float64(k))
		}
	}
	return sum
}

// TestWeightedSplitErrorRates checks the weighted test's error rates
// exactly, on two backends. Size: a correct 2:1 split fails at alpha 1e-6
// with probability 9.7e-7 over 3000 connections and 1.03e-6 over 600 (the
// chi-square approximation holds in the tail). Power: a proxy that splits
// 1:1 where 2:1 is expected passes with probability 0.113 over 300
// connections exactly, where MissProbability's noncentral approximation
// says 0.109, and 0.020 over 400 (approximation 0.015).
func TestWeightedSplitErrorRates(t *testing.T) {
	for _, n := range []int{600, 3000} {
		if size := exactRejection(n, 1e-6, []float64{2, 1}, 2.0/3); size < 0.5e-6 || size > 1.5e-6 {
			t.Errorf("n %d: a correct 2:1 split fails with probability %.3g, want about alpha 1e-6", n, size)
		}
	}
	for _, tc := range []struct {
		n           int
		exact, appr float64
	}{{300, 0.1126, 0.1090}, {400, 0.0201, 0.0146}} {
		exact := 1 - exactRejection(tc.n, 1e-6, []float64{2, 1}, 0.5)
		appr := MissProbability(tc.n, 1e-6, []float64{2, 1}, []float64{1, 1})
		if math.Abs(exact-tc.exact) > 5e-4 || math.Abs(appr-tc.appr) > 5e-4 {
			t.Errorf("n %d: 1:1 passes against 2:1 with probability %.4f exactly and %.4f approximated; want %.4f and %.4f", tc.n, exact, appr, tc.exact, tc.appr)
		}
	}
	// The integration test's 2:1:1 expectation over 1000 connections of a
	// uniform split is missed with probability 4.4e-8.
	if miss := MissProbability(1000, 1e-6, []float64{2, 1, 1}, []float64{1, 1, 1}); miss > 1e-7 {
		t.Errorf("2:1:1 against a uniform split, 1000 connections: miss probability %.3g, want < 1e-7", miss)
	}
}

// FuzzParseExpected: any --expect list is refused or gives shares that are
// positive and sum to 1, one per unique name, in the given order.
func FuzzParseExpected(f *testing.F) {
	for _, seed := range []string{"a=2,b=1", "a,b,c", "a=0", "a=1e308,b=1e308", "a=1e-320", "=,=", "a=NaN", " a = 3 "} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, list string) {
		entries := strings.Split(list, ",")
		names, shares, err := ParseExpected(entries)
		if err != nil {
			return
		}
		if len(names) != len(entries) || len(shares) != len(names) {
			t.Fatalf("%q: %d names and %d shares for %d entries", list, len(names), len(shares), len(entries))
		}
		var sum float64
		for _, n := range names {
			s := shares[n]
			if !(s > 0) || s > 1 {
				t.Fatalf("%q: share of %q is %v", list, n, s)
			}
			sum += s
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("%q: shares sum to %v", list, sum)
		}
	})
}
