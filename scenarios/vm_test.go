package scenarios

import (
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/internal/vm/vmtest"
)

// TestIPVSScenariosInVM runs the IPVS specs (mode switch, its dual-stack
// IPv6 variant, schedulers, graceful termination) inside svclab's VM when
// this kernel has no IPVS.
// On a kernel with IPVS, TestScenarios runs them directly.
func TestIPVSScenariosInVM(t *testing.T) {
	if roottest.HasIPVS() {
		t.Skip("this kernel has IPVS: TestScenarios runs the IPVS specs directly")
	}
	out := vmtest.Run(t, vmtest.Options{
		Package: "./scenarios",
		// The 10 IPv4 specs take ~5 minutes under TCG on an idle 2-core
		// host, more than 10 on a loaded one; the 4 of the dual-stack mode
		// switch alone took 4m53s on a loaded one.
		Timeout: 35 * time.Minute,
		Args:    []string{"-test.run", "^TestScenarios$", "-test.v", "-ginkgo.label-filter", "ipvs", "-ginkgo.v", "-ginkgo.no-color"},
	})
	if n := vmtest.GinkgoSpecsRun(out); n < 14 {
		t.Errorf("only %d IPVS specs ran in the VM, want 14", n)
	}
}
