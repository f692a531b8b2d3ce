package roottest

import (
	"os/exec"
	"testing"
)

// Netns creates an empty network namespace named prefix-<5 random
// characters> (in /run/netns, as `ip netns add` makes it) with lo up, and
// deletes it when the test ends. Nothing here touches the host's own
// namespace. The caller has called Require.
func Netns(t testing.TB, prefix string) string {
	t.Helper()
	name := UniqueName(prefix)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	if out, err := exec.Command("ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip -n %s link set lo up: %v: %s", name, err, out)
	}
	return name
}
