// Package roottest holds the guard that tests needing root call first.
//
// Outside CI a test that needs root and runs without it is skipped with a
// message that says why. Under CI (CI=true) the same situation is a failure:
// a skipped root test there would hide that the kernel path was never run.
package roottest

import (
	"os"
	"testing"
)

// Require stops the test unless the process runs as root. why says what the
// test needs root for ("creates network namespaces", "runs iptables-restore").
func Require(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("needs root (%s), and CI=true: a skipped root test counts as a failure; run as root", why)
	}
	t.Skipf("skipped: needs root (%s); run `sudo make test`", why)
}
