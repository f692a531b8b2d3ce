package kernel

import (
	"os/exec"
	"testing"
)

// TestDetectModeOfInstalledBackends runs each installed backend's
// iptables --version.
func TestDetectModeOfInstalledBackends(t *testing.T) {
	for backend, want := range map[Backend]Mode{BackendLegacy: ModeLegacy, BackendNFT: ModeNFTables} {
		if _, err := exec.LookPath("iptables-" + string(backend)); err != nil {
			t.Logf("iptables-%s not installed; not checked", backend)
			continue
		}
		got, err := DetectMode(backend)
		if err != nil || got != want {
			t.Errorf("DetectMode(%s) = %s, %v; want %s", backend, got, err, want)
		}
	}
}
