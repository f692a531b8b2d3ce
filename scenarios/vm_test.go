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
		// schedulers, servicetypes' ipvs mode) took 6m24s in the VM under
		// TCG on a 2-core host at load 7 (the dual-stack switch's 4 specs
		// ~2 minutes of it), more on a busier one.
		Timeout: 60 * time.Minute,
		Args:    []string{"-test.run", "^TestScenarios$", "-test.v", "-ginkgo.label-filter", "ipvs", "-ginkgo.v", "-ginkgo.no-color"},
	})
	if n := vmtest.GinkgoSpecsRun(out); n < 21 {
		t.Errorf("only %d IPVS specs ran in the VM, want 21", n)
	}
}
