package cli

import (
	"strings"
	"testing"
)

// TestUIRefusesNonLoopbackListen: `svclab ui --listen` takes 127.0.0.1
// only, and says so before it looks for a lab.
func TestUIRefusesNonLoopbackListen(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir()) // no lab: the address is checked first
	for _, addr := range []string{"0.0.0.0:8470", ":8470", "[::1]:8470", "localhost:8470", "10.0.0.1:8470"} {
		out, err := run("ui", "--listen", addr)
		if err == nil || !strings.Contains(err.Error(), "--listen") || !strings.Contains(err.Error(), "127.0.0.1 only") {
			t.Errorf("ui --listen %s: %v\n%s", addr, err, out)
		}
	}
}
