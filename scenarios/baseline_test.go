package scenarios

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/vm"
	"github.com/svclab/svclab/scenarios/kit"
)

// The mode-switch specs check each mode's split of a Service's traffic
// over its three pods. Where they run on a kernel with IPVS of its own,
// that is a uniformity test (kit.SampleSize(0.4, 0.3, 0.3) connections,
// kit.ExpectUniform). In svclab's VM ($SVCLAB_VM=1, every instruction
// emulated by TCG) those ~3,400 connections took 14 minutes a spec, and
// some went past their 10 s in CI. The iptables ladder's split and
// nftables' numgen split are proven on the host kernel itself (the
// conformance suite's ladder on labs, in both families by make
// test-families; the nftables mode specs), and the specs check each mode's
// rules (the ladder's probabilities, `numgen random mod 3` over the three
// pods): so in the VM the iptables and nftables splits are checked by
// vmBaselineConnections connections that all succeed, every pod answering.
// With three pods picked evenly, a correct proxy leaves one out with
// probability 3 × (2/3)^40 ≈ 2.7e-7, under the one in a million the specs
// allow. IPVS's own splits (round robin, weights) are checked in full.
const vmBaselineConnections = 40

// baselineConnections is how many connections an iptables or nftables
// split's traffic makes here (see vmBaselineConnections).
func baselineConnections() int {
	if vm.InGuest() {
		return vmBaselineConnections
	}
	return kit.SampleSize(0.4, 0.3, 0.3)
}

// expectBaselineSplit asserts an iptables or nftables split over the pods:
// uniform on a kernel with IPVS, every pod answering in the VM.
func expectBaselineSplit(what string, counts []float64) {
	GinkgoHelper()
	if !vm.InGuest() {
		kit.ExpectUniform(what, counts)
		return
	}
	for i, c := range counts {
		Expect(c).To(BeNumerically(">", 0), "%s: pod %d of %d answered none of %d connections: %v", what, i+1, len(counts), vmBaselineConnections, counts)
	}
}
