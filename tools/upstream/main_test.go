package upstream

import (
	"fmt"
	"os"
	"testing"
)

// netnsErr is why the tests could not get their network namespace.
var netnsErr error

func TestMain(m *testing.M) {
	if !InPrivateNetns() {
		code, err := ReexecInNetns()
		if err == nil {
			os.Exit(code)
		}
		netnsErr = err
		os.Exit(m.Run())
	}
	if err := SetUpNetns(); err != nil {
		fmt.Fprintln(os.Stderr, "setting up the network namespace:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// requireNetns stops a test that drives upstream's proxier unless it runs in
// the private network namespace. Under CI=true that is a failure.
func requireNetns(t testing.TB) {
	t.Helper()
	if netnsErr == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v; needs root or user namespaces, and CI=true", netnsErr)
	}
	t.Skipf("skipped: %v (run as root: sudo make test-upstream)", netnsErr)
}
