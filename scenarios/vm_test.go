package scenarios

import (
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/internal/vm/vmtest"
)

// TestIPVSScenariosInVM runs the specs labelled ipvs (mode switch, its
// dual-stack IPv6 variant, schedulers, graceful termination, Service types
// in ipvs mode) inside svclab's VM when this kernel has no IPVS. On a
// kernel with IPVS, TestScenarios runs them directly.
func TestIPVSScenariosInVM(t *testing.T) {
	if roottest.HasIPVS() {
		t.Skip("this kernel has IPVS: TestScenarios runs the IPVS specs directly")
	}
	out := vmtest.Run(t, vmtest.Options{
		Package: "./scenarios",
		// The 21 specs (the mode switch, its dual-stack IPv6 variant, the
		// schedulers, servicetypes' ipvs mode) took 55 to 60 minutes in
		// the VM in CI (3,271 s, 3,335 s and 3,508 s of spec time, on one
		// emulated CPU beside the other VM suites and the host's tests
		// on 2 cores): every exec there costs a second or more, a proxy's
		// start half a minute. The limit leaves that a margin; make
		// test's VM_TEST_TIMEOUT (70m) is above it with the build.
		Timeout: 66 * time.Minute,
		Args:    []string{"-test.run", "^TestScenarios$", "-test.v", "-ginkgo.label-filter", "ipvs", "-ginkgo.v", "-ginkgo.no-color"},
	})
	if n := vmtest.GinkgoSpecsRun(out); n < 21 {
		t.Errorf("only %d IPVS specs ran in the VM, want 21", n)
	}
}
