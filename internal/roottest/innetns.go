package roottest

import (
	"path/filepath"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
)

// InNetns runs fn on an OS thread switched into the network namespace
// named name (in /run/netns, as Netns makes it), so that sockets and
// netlink handles fn opens belong to that namespace, and fails the test
// if the namespace cannot be entered or fn returns an error. fn runs on
// another goroutine: it returns its failure instead of calling t.Fatal.
func InNetns(t testing.TB, name string, fn func() error) {
	t.Helper()
	h, err := netns.GetFromPath(filepath.Join("/run/netns", name))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := nsthread.Do(name, h, fn); err != nil {
		t.Fatal(err)
	}
}
