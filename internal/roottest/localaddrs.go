package roottest

import (
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// AddLocalAddrs adds each address (a prefix, "fd00::5/64") to dev in the
// namespace name, IPv6 ones without duplicate address detection, and
// returns once the kernel routes every one of them as local. An IPv6
// address can be bound at once, but its local route comes from the
// kernel's address workqueue a moment later; until then a connection to
// it is unreachable or its packets are lost.
func AddLocalAddrs(t testing.TB, name, dev string, prefixes ...string) {
	t.Helper()
	for _, p := range prefixes {
		args := []string{"-n", name, "addr", "add", p, "dev", dev}
		if strings.Contains(p, ":") {
			args = append(args, "nodad")
		}
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	h, err := netns.GetFromPath(filepath.Join("/run/netns", name))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range prefixes {
		ip := netip.MustParsePrefix(p).Addr()
		for !routedLocal(nl, ip) {
			if time.Now().After(deadline) {
				t.Fatalf("%s in %s: no local route after 5s", ip, name)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// routedLocal reports whether `ip route get IP` in the handle's namespace
// answers a local route.
func routedLocal(h *netlink.Handle, ip netip.Addr) bool {
	routes, err := h.RouteGet(ip.AsSlice())
	return err == nil && len(routes) > 0 && routes[0].Type == unix.RTN_LOCAL
}
