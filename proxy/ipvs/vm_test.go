package ipvs

import (
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/internal/vm/vmtest"
)

// TestIntegrationsInVM runs this package's kernel tests inside svclab's VM
// when this kernel has no IPVS, and checks the IPVS ones really ran there.
func TestIntegrationsInVM(t *testing.T) {
	if roottest.HasIPVS() {
		t.Skip("this kernel has IPVS: the TestIntegration tests run directly")
	}
	out := vmtest.Run(t, vmtest.Options{Package: "./proxy/ipvs", Timeout: 45 * time.Minute, Args: []string{"-test.run", "^TestIntegration[A-Z]", "-test.v"}})
	for _, name := range []string{"TestIntegrationSync", "TestIntegrationSchedulerProbe", "TestIntegrationGracefulTermination",
		"TestIntegrationCachedSync", "TestIntegrationCachedSyncAtScale", "TestIntegrationTrackerSync",
		"TestIntegrationIPv6Sync", "TestIntegrationDualStackSync", "TestIntegrationIPv6Connection",
		"TestIntegrationIPv6GracefulTermination"} {
		if !strings.Contains(out, "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass in the VM", name)
		}
	}
}
