package trace_test

import (
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/internal/vm/vmtest"
)

// TestTraceIPVSInVM runs the IPVS trace test inside svclab's VM when this
// kernel has no IPVS.
func TestTraceIPVSInVM(t *testing.T) {
	if roottest.HasIPVS() {
		t.Skip("this kernel has IPVS: TestIntegrationTraceNodePortIPVS runs directly")
	}
	out := vmtest.Run(t, vmtest.Options{Package: "./labs/netns/trace", Args: []string{"-test.run", "^TestIntegrationTraceNodePortIPVS$", "-test.v"}, Timeout: 25 * time.Minute})
	if !strings.Contains(out, "--- PASS: TestIntegrationTraceNodePortIPVS") {
		t.Errorf("the IPVS trace test did not pass in the VM")
	}
}
