package roottest

import (
	"os"
	"os/exec"
	"testing"
)

// HasIPVS reports whether the running kernel offers IPVS, loading the ip_vs
// module if the kernel has it as a module (as upstream kube-proxy does).
func HasIPVS() bool {
	if _, err := os.Stat("/proc/net/ip_vs"); err == nil {
		return true
	}
	if exec.Command("modprobe", "-q", "ip_vs").Run() == nil {
		_, err := os.Stat("/proc/net/ip_vs")
		return err == nil
	}
	return false
}

// RequireIPVS skips the test on a kernel without IPVS. This is not a failure
// under CI: such kernels (this project's CI machine among them) run the IPVS
// integration tests inside svclab's VM instead, from a test that boots a
// stock kernel and fails if they fail there.
func RequireIPVS(t testing.TB) {
	t.Helper()
	if !HasIPVS() {
		t.Skip("skipped: this kernel has no IPVS (CONFIG_IP_VS); these tests run inside svclab's VM (make test-vm)")
	}
}
