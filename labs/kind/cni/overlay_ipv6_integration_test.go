package cni

import (
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/podnet"
)

// TestIntegrationOverlayIPv6 programs the IPv6 overlay in a namespace of
// its own standing for a node (eth0 with the node's IPv6 InternalIP), as
// flanneld does with EnableIPv6: flannel-v6.1, VXLAN VNI 1 port 8472 over
// the IPv6 address, MTU 1430, the podCIDR's network address as its
// address; for the peer a permanent neighbour, an FDB entry to its IPv6
// InternalIP and an onlink route to its podCIDR; a gone peer's route
// goes.
func TestIntegrationOverlayIPv6(t *testing.T) {
	roottest.Require(t, "creates a VXLAN device in a network namespace of its own")
	ns := roottest.Netns(t, "cniov6")
	for _, args := range [][]string{
		{"link", "add", "eth0", "type", "veth", "peer", "name", "eth0-peer"},
		{"addr", "add", "fc00:f853:ccd:e793::3/64", "dev", "eth0", "nodad"},
		{"link", "set", "eth0", "up"},
	} {
		if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip -n %s %s: %v\n%s", ns, strings.Join(args, " "), err, out)
		}
	}
	o, err := OverlayIPv6Of(FlannelVXLAN)
	if err != nil {
		t.Fatal(err)
	}
	self := Peer{Name: "kind-worker", IP: netip.MustParseAddr("fc00:f853:ccd:e793::3"), PodCIDR: netip.MustParsePrefix("fd00:10:244:1::/64")}
	peer := Peer{Name: "kind-control-plane", IP: netip.MustParseAddr("fc00:f853:ccd:e793::2"), PodCIDR: netip.MustParsePrefix("fd00:10:244::/64")}
	roottest.InNetns(t, ns, func() error { return programOverlay(o, self, []Peer{peer}) })

	ip := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ip -n %s %s: %v\n%s", ns, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	link := ip("-d", "link", "show", podnet.FlannelDeviceIPv6)
	for _, want := range []string{"mtu 1430 ", "vxlan id 1 local fc00:f853:ccd:e793::3 dev eth0 ", "dstport 8472 ", "nolearning", "link/ether " + VTEPMAC(self.Name, podnet.FlannelDeviceIPv6).String()} {
		if !strings.Contains(link, want) {
			t.Errorf("%s lacks %q:\n%s", podnet.FlannelDeviceIPv6, want, link)
		}
	}
	if addr := ip("-6", "addr", "show", "dev", podnet.FlannelDeviceIPv6, "scope", "global"); !strings.Contains(addr, "inet6 fd00:10:244:1::/128 ") {
		t.Errorf("%s's address is not the podCIDR's network address as a /128:\n%s", podnet.FlannelDeviceIPv6, addr)
	}
	peerMAC := VTEPMAC(peer.Name, podnet.FlannelDeviceIPv6).String()
	if neigh := ip("-6", "neigh", "show", "dev", podnet.FlannelDeviceIPv6); !strings.Contains(neigh, "fd00:10:244:: lladdr "+peerMAC+" PERMANENT") {
		t.Errorf("no permanent neighbour for the peer's VTEP:\n%s", neigh)
	}
	fdb, err := exec.Command("ip", "netns", "exec", ns, "bridge", "fdb", "show", "dev", podnet.FlannelDeviceIPv6).CombinedOutput()
	if err != nil || !strings.Contains(string(fdb), peerMAC+" dst fc00:f853:ccd:e793::2 self permanent") {
		t.Errorf("no FDB entry sending the peer's MAC to its IPv6 InternalIP (%v):\n%s", err, fdb)
	}
	if route := ip("-6", "route", "show", "dev", podnet.FlannelDeviceIPv6); !strings.Contains(route, "fd00:10:244::/64 via fd00:10:244:: metric 1024 onlink") {
		t.Errorf("no onlink route to the peer's podCIDR via its VTEP:\n%s", route)
	}

	roottest.InNetns(t, ns, func() error { return programOverlay(o, self, nil) })
	if route := ip("-6", "route", "show", "dev", podnet.FlannelDeviceIPv6); strings.Contains(route, "fd00:10:244::/64") {
		t.Errorf("the gone peer's route stays:\n%s", route)
	}
}
