package traffic

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func near(got, want, relTol float64) bool {
	return math.Abs(got-want) <= relTol*math.Abs(want)
}

func TestChiSquareCriticalValue(t *testing.T) {
	tests := []struct {
		alpha float64
		dof   int
		want  float64 // from standard chi-square tables
	}{
		{1e-6, 1, 23.928},
		{0.05, 1, 3.841},
		{0.01, 1, 6.635},
		{1e-6, 2, 27.631}, // = 2·ln(1e6)
		{0.05, 3, 7.815},
		{1e-7, 1, 28.374},
		{1e-8, 1, 32.841},
		{1e-8, 2, 36.841}, // = 2·ln(1e8)
		{1e-8, 3, 40.130},
	}
	for _, tt := range tests {
		got := ChiSquareCriticalValue(tt.alpha, tt.dof)
		if math.Abs(got-tt.want) > 5e-4 {
			t.Errorf("ChiSquareCriticalValue(%g, %d) = %.5f, want %.3f", tt.alpha, tt.dof, got, tt.want)
		}
		// At the critical value the p-value is alpha.
		if p := (distuv.ChiSquared{K: float64(tt.dof)}).Survival(got); !near(p, tt.alpha, 1e-6) {
			t.Errorf("p-value at the critical value = %g, want %g", p, tt.alpha)
		}
	}
}

// TestChiSquareCriticalValueFarTail checks the critical value down to
// alpha = 1e-12 against the closed forms of the chi-square survival function
// for 1 to 4 degrees of freedom (independent of gonum's incomplete gamma):
// P(χ²₁ ≥ x) = erfc(√(x/2)), P(χ²₂ ≥ x) = e^(−x/2),
// P(χ²₃ ≥ x) = erfc(√(x/2)) + √(2x/π)·e^(−x/2), P(χ²₄ ≥ x) = e^(−x/2)·(1 + x/2).
func TestChiSquareCriticalValueFarTail(t *testing.T) {
	survival := map[int]func(x float64) float64{
		1: func(x float64) float64 { return math.Erfc(math.Sqrt(x / 2)) },
		2: func(x float64) float64 { return math.Exp(-x / 2) },
		3: func(x float64) float64 { return math.Erfc(math.Sqrt(x/2)) + math.Sqrt(2*x/math.Pi)*math.Exp(-x/2) },
		4: func(x float64) float64 { return math.Exp(-x/2) * (1 + x/2) },
	}
	for dof := 1; dof <= 4; dof++ {
		for _, alpha := range []float64{0.5, 1e-2, 1e-6, 1e-7, 1e-8, 1e-10, 1e-12} {
			x := ChiSquareCriticalValue(alpha, dof)
			if p := survival[dof](x); !near(p, alpha, 1e-8) {
				t.Errorf("ChiSquareCriticalValue(%g, %d) = %.10g, where P(χ² ≥ x) = %.10g", alpha, dof, x, p)
			}
		}
	}
	// −2·ln(alpha) is exact for 2 degrees of freedom.
	if got, want := ChiSquareCriticalValue(1e-8, 2), -2*math.Log(1e-8); !near(got, want, 1e-12) {
		t.Errorf("ChiSquareCriticalValue(1e-8, 2) = %.15g, want %.15g", got, want)
	}
}

func TestChiSquarePValue(t *testing.T) {
	tests := []struct {
		name   string
		counts []float64
		shares []float64
		want   float64
	}{
		{"perfect split", []float64{50, 50}, []float64{0.5, 0.5}, 1},
		// statistic 4 on 1 dof: P(χ²₁ ≥ 4) = P(|Z| ≥ 2) = 0.0455003
		{"60/40 of 100", []float64{60, 40}, []float64{0.5, 0.5}, 0.04550026},
		{"shares are normalised", []float64{60, 40}, []float64{1, 1}, 0.04550026},
		// statistic 10 on 2 dof: P(χ²₂ ≥ 10) = e^-5
		{"three backends", []float64{10, 20, 30}, []float64{1, 1, 1}, math.Exp(-5)},
		// statistic 23.928 on 1 dof: 4(x − N/2)²/N with N = 10000 needs
		// |x − 5000| = 244.58; x = 5244.58 is not a count, so compare with
		// the survival function at the exact statistic.
		{"at the 1e-6 critical value", []float64{5244, 4756}, []float64{0.5, 0.5},
			distuv.ChiSquared{K: 1}.Survival(4 * 244 * 244 / 10000.0)},
		{"skewed expectation met", []float64{75, 25}, []float64{0.75, 0.25}, 1},
		{"hit a backend expected to get nothing", []float64{50, 49, 1}, []float64{0.5, 0.5, 0}, 0},
		{"zero-share backend not hit is ignored", []float64{60, 40, 0}, []float64{0.5, 0.5, 0}, 0.04550026},
		{"one backend", []float64{100}, []float64{1}, 1},
	}
	for _, tt := range tests {
		got := ChiSquarePValue(tt.counts, tt.shares)
		if !near(got, tt.want, 1e-6) && !(got == tt.want) {
			t.Errorf("%s: ChiSquarePValue(%v, %v) = %.8g, want %.8g", tt.name, tt.counts, tt.shares, got, tt.want)
		}
	}
	if p := ChiSquarePValue([]float64{0, 0}, []float64{0.5, 0.5}); !math.IsNaN(p) {
		t.Errorf("no counts: p-value %g, want NaN", p)
	}
	// The 1e-6 threshold on 1 dof sits at 23.928.
	if p := ChiSquarePValue([]float64{5245, 4755}, []float64{1, 1}); p >= 1e-6 { // statistic 24.01
		t.Errorf("statistic 24.01: p-value %g, want < 1e-6", p)
	}
	if p := ChiSquarePValue([]float64{5244, 4756}, []float64{1, 1}); p < 1e-6 { // statistic 23.81
		t.Errorf("statistic 23.81: p-value %g, want ≥ 1e-6", p)
	}
	defer func() {
		if recover() == nil {
			t.Error("mismatched lengths did not panic")
		}
	}()
	ChiSquarePValue([]float64{1, 2}, []float64{1})
}

// TestUniformitySampleSize pins the number a lab test of a 2-backend
// Service uses, and checks the approximation against exact binomial error
// rates.
func TestUniformitySampleSize(t *testing.T) {
	const alpha, miss = 1e-6, 1e-6
	n, err := UniformitySampleSize(alpha, []float64{0.6, 0.4}, miss)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2326 {
		t.Errorf("UniformitySampleSize(1e-6, 60/40, 1e-6) = %d, want 2326", n)
	}
	if m := UniformityMissProbability(n, alpha, []float64{0.6, 0.4}); m > miss {
		t.Errorf("miss probability at n=%d is %g, want ≤ %g", n, m, miss)
	}
	if m := UniformityMissProbability(n-1, alpha, []float64{0.6, 0.4}); m <= miss {
		t.Errorf("n=%d already meets the bound (%g): n is not the least", n-1, m)
	}

	// Exact, for two backends: the test rejects when 4(x − N/2)²/N ≥ c,
	// i.e. x ≤ lo or x ≥ hi, with x ~ Binomial(N, p).
	N := float64(n)
	c := ChiSquareCriticalValue(alpha, 1)
	half := math.Sqrt(c*N) / 2
	lo, hi := math.Floor(N/2-half), math.Ceil(N/2+half)
	fair := distuv.Binomial{N: N, P: 0.5}
	falseAlarm := fair.CDF(lo) + fair.CDF(N-hi) // symmetric tails
	skewed := distuv.Binomial{N: N, P: 0.6}
	exactMiss := skewed.CDF(hi-1) - skewed.CDF(lo)
	t.Logf("n=%d: exact false alarm %.3g (nominal %g), exact miss %.3g (bound %g)", n, falseAlarm, alpha, exactMiss, miss)
	// The chi-square approximation to the binomial tail is slightly
	// optimistic at 4.9σ: the exact false-alarm rate is 1.08e-6.
	if falseAlarm > 1.2*alpha {
		t.Errorf("exact false-alarm rate %g, more than 1.2 × alpha", falseAlarm)
	}
	if exactMiss > miss {
		t.Errorf("exact miss rate %g, more than %g", exactMiss, miss)
	}

	// More backends or a subtler skew need more connections.
	n3, err := UniformitySampleSize(alpha, []float64{0.4, 0.3, 0.3}, miss)
	if err != nil || n3 != 4942 {
		t.Errorf("UniformitySampleSize(40/30/30) = %d, %v, want 4942", n3, err)
	}
	n55, err := UniformitySampleSize(alpha, []float64{0.55, 0.45}, miss)
	if err != nil || n55 != 9303 {
		t.Errorf("UniformitySampleSize(55/45) = %d, %v, want 9303", n55, err)
	}
}

func TestUniformitySampleSizeErrors(t *testing.T) {
	tests := []struct {
		name        string
		alpha, miss float64
		alt         []float64
	}{
		{"uniform alternative", 1e-6, 1e-6, []float64{0.5, 0.5}},
		{"one backend", 1e-6, 1e-6, []float64{1}},
		{"alpha 0", 0, 1e-6, []float64{0.6, 0.4}},
		{"miss 1", 1e-6, 1, []float64{0.6, 0.4}},
		{"negative share", 1e-6, 1e-6, []float64{1.2, -0.2}},
		{"NaN share", 1e-6, 1e-6, []float64{math.NaN(), 0.5}},
	}
	for _, tt := range tests {
		if n, err := UniformitySampleSize(tt.alpha, tt.alt, tt.miss); err == nil {
			t.Errorf("%s: got n=%d, want an error", tt.name, n)
		}
	}
}
