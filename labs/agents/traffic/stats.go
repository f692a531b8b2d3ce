package traffic

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// ChiSquareStatistic is Pearson's statistic Σ (oᵢ − eᵢ)²/eᵢ of counts
// against expectedShares, with eᵢ = N·shareᵢ, N = Σ counts, and the
// degrees of freedom: the number of categories with a share > 0, minus one.
// expectedShares are normalised to sum to 1. A count in a category whose
// share is 0 makes the statistic +Inf (that category should never be hit).
// It panics if the slices differ in length.
func ChiSquareStatistic(counts, expectedShares []float64) (statistic float64, dof int) {
	if len(counts) != len(expectedShares) {
		panic(fmt.Sprintf("traffic.ChiSquareStatistic: %d counts but %d expected shares", len(counts), len(expectedShares)))
	}
	var total, shareSum float64
	for i := range counts {
		total += counts[i]
		shareSum += expectedShares[i]
	}
	var obs, exp []float64
	for i, c := range counts {
		if expectedShares[i] <= 0 {
			if c > 0 {
				return math.Inf(1), 0
			}
			continue
		}
		obs = append(obs, c)
		exp = append(exp, total*expectedShares[i]/shareSum)
	}
	if len(obs) == 0 || total == 0 {
		return math.NaN(), 0
	}
	return stat.ChiSquare(obs, exp), len(obs) - 1
}

// ChiSquarePValue is the p-value of Pearson's chi-square goodness-of-fit
// test of counts against expectedShares: the probability, if connections
// really were spread by those shares, of a split at least this uneven.
// Small means "not spread as expected".
//
// It is 0 when a category with share 0 got a count, 1 when there is only
// one category with a share (nothing can deviate), and NaN when there are
// no counts at all. It panics if the slices differ in length.
func ChiSquarePValue(counts, expectedShares []float64) float64 {
	statistic, dof := ChiSquareStatistic(counts, expectedShares)
	switch {
	case math.IsNaN(statistic):
		return math.NaN()
	case math.IsInf(statistic, 1):
		return 0
	case dof == 0:
		return 1
	}
	return distuv.ChiSquared{K: float64(dof)}.Survival(statistic)
}

// ChiSquareCriticalValue is the statistic at which the test with dof degrees
// of freedom rejects at level alpha: P(χ²_dof ≥ value) = alpha. For alpha
// 1e-6 and 1 degree of freedom it is 23.928.
func ChiSquareCriticalValue(alpha float64, dof int) float64 {
	if !(alpha > 0 && alpha < 1) || dof < 1 {
		panic(fmt.Sprintf("traffic.ChiSquareCriticalValue: alpha %g must be in (0,1), dof %d at least 1", alpha, dof))
	}
	// P(χ²_k ≥ x) = Q(k/2, x/2), the regularised upper incomplete gamma
	// function, so x = 2·Q⁻¹(k/2, alpha): exact in the far tail too.
	return 2 * mathext.GammaIncRegCompInv(float64(dof)/2, alpha)
}

// noncentralChiSquareCDF is P(X ≤ x) for X ~ χ²_dof(λ), the noncentral
// chi-square, as the Poisson(λ/2) mixture of central chi-squares:
// Σⱼ Pois(j; λ/2)·P(χ²_{dof+2j} ≤ x). gonum has no noncentral chi-square;
// every term is positive, so the sum loses no precision in the tail.
func noncentralChiSquareCDF(x float64, dof int, lambda float64) float64 {
	half := lambda / 2
	poisson := distuv.Poisson{Lambda: half}
	last := int(half + 40*math.Sqrt(half) + 100)
	var sum float64
	for j := 0; j <= last; j++ {
		w := poisson.Prob(float64(j))
		if w == 0 {
			continue
		}
		sum += w * distuv.ChiSquared{K: float64(dof + 2*j)}.CDF(x)
	}
	return math.Min(sum, 1)
}

// UniformityMissProbability is the probability that n connections split by
// the alternative shares pass the chi-square test of uniformity at level
// alpha (p-value ≥ alpha): the test's type II error, from the noncentral
// chi-square approximation. len(alternative) is the number of backends k;
// the shares are normalised.
func UniformityMissProbability(n int, alpha float64, alternative []float64) float64 {
	k := len(alternative)
	critical := ChiSquareCriticalValue(alpha, k-1)
	return noncentralChiSquareCDF(critical, k-1, float64(n)*effectSize(alternative))
}

// MissProbability is the probability that n connections split by the
// actual shares pass the chi-square test against the expected shares at
// level alpha: the test's type II error, from the noncentral chi-square
// approximation with noncentrality n·Σ (aᵢ − eᵢ)²/eᵢ (both sets of shares
// normalised; UniformityMissProbability is the case of uniform expected
// shares). It panics if the slices differ in length or have fewer than 2
// entries.
func MissProbability(n int, alpha float64, expected, actual []float64) float64 {
	if len(expected) != len(actual) || len(expected) < 2 {
		panic(fmt.Sprintf("traffic.MissProbability: %d expected and %d actual shares", len(expected), len(actual)))
	}
	var es, as float64
	for i := range expected {
		es += expected[i]
		as += actual[i]
	}
	var w2 float64
	for i := range expected {
		e, a := expected[i]/es, actual[i]/as
		w2 += (a - e) * (a - e) / e
	}
	k := len(expected)
	return noncentralChiSquareCDF(ChiSquareCriticalValue(alpha, k-1), k-1, float64(n)*w2)
}

// effectSize is Cohen's w² = Σ (pᵢ − 1/k)²/(1/k) of the alternative shares
// against the uniform split; the noncentrality after n connections is n·w².
func effectSize(alternative []float64) float64 {
	k := float64(len(alternative))
	var sum float64
	for _, p := range alternative {
		sum += p
	}
	var w2 float64
	for _, p := range alternative {
		d := p/sum - 1/k
		w2 += d * d * k
	}
	return w2
}

// UniformitySampleSize returns the least number of connections n for which
// the chi-square test of uniformity over k = len(alternative) backends,
// rejecting when its p-value is below alpha,
//
//   - fails a correct uniform split with probability alpha (by construction
//     of the critical value; with the chi-square approximation to the
//     multinomial), and
//   - catches a split by the alternative shares (e.g. {0.6, 0.4}) with
//     probability at least 1 − miss.
//
// The second uses the standard power approximation: under the alternative
// Pearson's statistic is approximately noncentral chi-square with k − 1
// degrees of freedom and noncentrality λ = n·Σ (pᵢ − 1/k)²/(1/k), and n is
// the least integer with P(χ²_{k−1}(λ) < critical) ≤ miss. For alpha = miss
// = 1e-6 and 60/40 on two backends it gives 2326; the exact binomial error
// rates at that n are checked in the tests.
func UniformitySampleSize(alpha float64, alternative []float64, miss float64) (int, error) {
	if !(alpha > 0 && alpha < 1) || !(miss > 0 && miss < 1) {
		return 0, fmt.Errorf("uniformity sample size: alpha %g and miss %g must be in (0, 1)", alpha, miss)
	}
	if len(alternative) < 2 {
		return 0, errors.New("uniformity sample size: the alternative needs at least 2 backends")
	}
	for _, p := range alternative {
		if !(p >= 0) || math.IsInf(p, 1) {
			return 0, fmt.Errorf("uniformity sample size: share %g is not a non-negative number", p)
		}
	}
	if effectSize(alternative) < 1e-12 {
		return 0, fmt.Errorf("uniformity sample size: alternative %v is uniform, no sample size tells it apart", alternative)
	}
	missAt := func(n int) float64 { return UniformityMissProbability(n, alpha, alternative) }
	hi := 2
	for missAt(hi) > miss {
		if hi > 1<<40 {
			return 0, fmt.Errorf("uniformity sample size: alternative %v is too close to uniform", alternative)
		}
		hi *= 2
	}
	lo := hi / 2 // missAt(lo) > miss, or lo is 1
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if missAt(mid) > miss {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}
