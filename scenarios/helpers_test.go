package scenarios

import (
	"net/netip"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/labs"
	"github.com/svclab/svclab/labs/traffic"
	"github.com/svclab/svclab/scenarios/kit"
)

func itoa(i int) string { return strconv.Itoa(i) }

// Statistics, stated once for every distribution assertion of the suite.
//
// Each assertion is a chi-square goodness-of-fit test that fails when its
// p-value is below alpha = 1e-7. This suite makes 1 such assertion,
// tools/cli 1 more, and the conformance suite (scenarios/conformance, the
// two-pod split and the ladder on netns labs) 5 at alpha 1e-8, so a
// correct proxy fails a run of `make test` with probability below
// 2 × 1e-7 + 5 × 1e-8 = 2.5e-7 < 1e-6 (Bonferroni, with room to spare for
// the chi-square approximation's slightly heavier exact tail). The number of connections
// is the least n for which the test also catches a skew — 60/40 on two
// backends, 40/30/30 on three — with probability at least 1 − 1e-6
// (traffic.UniformitySampleSize, noncentral chi-square power): it is
// computed below, not guessed, and printed with each spec.
const (
	alpha = 1e-7
	miss  = 1e-6
)

// sampleSize is n for a uniformity test over the given skewed alternative.
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
	p := traffic.ChiSquarePValue(counts, shares)
	ExpectWithOffset(1, p).To(BeNumerically(">=", alpha),
		"%s: counts %v are not a uniform split (chi-square p-value %.3g < alpha %g)", what, counts, p, alpha)
}

// expectShares asserts that counts split by the given shares, at level alpha.
func expectShares(what string, counts, shares []float64) {
	p := traffic.ChiSquarePValue(counts, shares)
	ExpectWithOffset(1, p).To(BeNumerically(">=", alpha),
		"%s: counts %v do not fit shares %v (chi-square p-value %.3g < alpha %g)", what, counts, shares, p, alpha)
}

// serviceVIP returns the cluster IP the lab gave to default/<name>.
func serviceVIP(lab *kit.Lab, name string) netip.Addr {
	objs, _, err := lab.Store.ReadObjects()
	Expect(err).NotTo(HaveOccurred())
	svc := objs.Service("default", name)
	Expect(svc).NotTo(BeNil(), "service default/%s", name)
	return netip.MustParseAddr(svc.Spec.ClusterIP)
}

// podIPs maps the names of the pods labelled app=<app> to their IPs.
func podIPs(lab *kit.Lab, app string) map[string]netip.Addr {
	objs, _, err := lab.Store.ReadObjects()
	Expect(err).NotTo(HaveOccurred())
	out := map[string]netip.Addr{}
	for _, p := range objs.Pods {
		if p.Labels["app"] == app {
			out[p.Name] = netip.MustParseAddr(p.Status.PodIP)
		}
	}
	return out
}

// labOpts are the options the scenarios' lab operations run with.
func labOpts() labs.Options { return labs.Options{Binary: binary} }

func must(s string, err error) string {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	return s
}
