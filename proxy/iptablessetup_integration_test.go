package proxy

import (
	"log/slog"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
	"github.com/svclab/svclab/internal/roottest"
)

// TestIntegrationRouteLocalnetPerNamespace: on the real kernel, the
// default configuration sets route_localnet=1 in the network namespace the
// proxy runs in and nowhere else (the root namespace and a sibling keep
// theirs), and localhostNodePorts: false leaves it 0.
func TestIntegrationRouteLocalnetPerNamespace(t *testing.T) {
	roottest.Require(t, "creates network namespaces and writes a sysctl in one")
	rootBefore := readRootRouteLocalnet(t)
	defaulted, disabled := roottest.Netns(t, "svclabrl"), roottest.Netns(t, "svclabrl")

	setUpIn(t, defaulted, "")
	setUpIn(t, disabled, "iptables: {localhostNodePorts: false}\n")

	if got := routeLocalnetIn(t, defaulted); got != "1" {
		t.Errorf("route_localnet in the proxy's namespace = %s, want 1", got)
	}
	if got := routeLocalnetIn(t, disabled); got != "0" {
		t.Errorf("route_localnet with localhostNodePorts false = %s, want 0 (a new namespace's value)", got)
	}
	if after := readRootRouteLocalnet(t); after != rootBefore {
		t.Errorf("the root namespace's route_localnet changed from %s to %s", rootBefore, after)
	}
}

// setUpIn runs setUpIPTablesKernel with the real /proc/sys on a thread in
// the named namespace, as the proxy process runs in a lab node's.
func setUpIn(t *testing.T, ns, body string) {
	t.Helper()
	cfg := parseConfig(t, body)
	h, err := netns.GetFromPath(filepath.Join("/run/netns", ns))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	err = nsthread.Do(ns, h, func() error {
		_, err := setUpIPTablesKernel(cfg, "", procSys{}, slog.New(slog.DiscardHandler))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func routeLocalnetIn(t *testing.T, ns string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-n", "net.ipv4.conf.all.route_localnet").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func readRootRouteLocalnet(t *testing.T) string {
	t.Helper()
	v, err := procSys{}.Get(sysctlRouteLocalnet)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(v)
}
