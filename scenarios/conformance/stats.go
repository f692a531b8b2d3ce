package conformance

import (
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/labs/traffic"
)

// Statistics, stated once for every distribution assertion of the suite.
//
// Each assertion is a chi-square goodness-of-fit test that fails when its
// p-value is below alpha = 1e-8. One run of the suite makes at most 5
// such assertions (the split: pod and outside client; the ladder: first
// rule, second rule, backends — the rule-counter ones only in iptables
// mode), so a correct proxy fails a run with probability below
// 5 × 1e-8 = 5e-7 < 1e-6 (Bonferroni), with room for the chi-square
// approximation's slightly heavier exact tail. The number of connections
// is the least n for which the test also catches a skew (60/40 on two
// backends, 40/30/30 on three) with probability at least 1 − 1e-6
// (traffic.UniformitySampleSize, noncentral chi-square power): 2748 on
// two backends, 5791 on three. It is computed, not guessed, and each
// spec prints it.
const (
	alpha = 1e-8
	miss  = 1e-6
)

// sampleSize is n for a uniformity test against the skewed alternative.
func sampleSize(alternative ...float64) int {
	n, err := traffic.UniformitySampleSize(alpha, alternative, miss)
	Expect(err).NotTo(HaveOccurred())
	return n
}

// expectUniform asserts that counts are a uniform split at level alpha.
func expectUniform(what string, counts []float64) {
	shares := make([]float64, len(counts))
	for i := range shares {
		shares[i] = 1 / float64(len(counts))
	}
	expectShares(what, counts, shares)
}

// expectShares asserts that counts split by the given shares, at level alpha.
func expectShares(what string, counts, shares []float64) {
	p := traffic.ChiSquarePValue(counts, shares)
	ExpectWithOffset(2, p).To(BeNumerically(">=", alpha),
		"%s: counts %v do not fit shares %v (chi-square p-value %.3g < alpha %g)", what, counts, shares, p, alpha)
}
