package kit

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/svclab/svclab/labs/agents/traffic"
)

// Statistics, stated once for every distribution assertion of `make test`.
//
// Each assertion is a chi-square goodness-of-fit test (ExpectUniform,
// ExpectShares) that fails when its p-value is below Alpha = 1e-8. One
// `make test` run makes at most 10 such tests: the scenarios 4 (the IPVS
// mode switch's iptables split; nftables mode's two-pod split on each of
// the three CNIs), the conformance suite on netns labs 5 (the
// two-pod split from a pod and from outside; the three-pod ladder's first
// rule, second rule — those two only in iptables mode — and backends), and
// tools/cli's acceptance walk 1, which asserts the traffic report's p-value
// at its own 1e-7 (n is fixed at 3000 there). So a correct proxy fails a
// run with probability below 9 × 1e-8 + 1e-7 = 1.9e-7 < 1e-6 (Bonferroni),
// with room for the chi-square approximation's exact tail (for two backends
// at n = 2748 the exact binomial false-alarm rate is 0.91 × 1e-8).
//
// The number of connections is the least n for which the test also
// catches a skew — 60/40 on two backends, 40/30/30 on three — with
// probability at least 1 − Miss (traffic.UniformitySampleSize, noncentral
// chi-square power): 2748 on two backends, 5791 on three. It is computed,
// not guessed, and each spec prints it.
const (
	Alpha = 1e-8
	Miss  = 1e-6
)

// SampleSize is the number of connections for a uniformity test at Alpha
// that catches the skewed alternative (e.g. 0.6, 0.4) with probability at
// least 1 − Miss.
func SampleSize(alternative ...float64) int {
	ginkgo.GinkgoHelper()
	n, err := traffic.UniformitySampleSize(Alpha, alternative, Miss)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return n
}

// ExpectUniform asserts that counts are a uniform split, at level Alpha.
func ExpectUniform(what string, counts []float64) {
	ginkgo.GinkgoHelper()
	shares := make([]float64, len(counts))
	for i := range shares {
		shares[i] = 1 / float64(len(counts))
	}
	p := traffic.ChiSquarePValue(counts, shares)
	gomega.Expect(p).To(gomega.BeNumerically(">=", Alpha),
		"%s: counts %v are not a uniform split (chi-square p-value %.3g < alpha %g)", what, counts, p, Alpha)
}

// ExpectShares asserts that counts split by the given shares, at level
// Alpha.
func ExpectShares(what string, counts, shares []float64) {
	ginkgo.GinkgoHelper()
	p := traffic.ChiSquarePValue(counts, shares)
	gomega.Expect(p).To(gomega.BeNumerically(">=", Alpha),
		"%s: counts %v do not fit shares %v (chi-square p-value %.3g < alpha %g)", what, counts, shares, p, Alpha)
}
