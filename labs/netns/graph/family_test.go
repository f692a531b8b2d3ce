package graph

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/netns/topology"
)

// TestBuildDualStack: the graph of the shipped dual-stack lab has both
// families' addresses, both VXLAN devices joined by a tunnel each, and a
// dual-stack pod with its pair of addresses; every renderer draws it.
func TestBuildDualStack(t *testing.T) {
	lab := loadCluster(t, "dual-stack.yaml", topology.CNICalicoProxyARP)
	g, err := Build(lab, []Pod{{
		Name: "web", Node: "node2", IP: netip.MustParseAddr("10.244.2.2"),
		IPs: []netip.Addr{netip.MustParseAddr("10.244.2.2"), netip.MustParseAddr("fd00:10:244:2::2")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	node2, _ := g.Host("node2")
	eth0, _ := node2.Interface("eth0")
	if len(eth0.Addrs) != 2 || eth0.Addrs[1].String() != "fd00::c0a8:104a/116" {
		t.Errorf("node2 eth0 = %v", eth0.Addrs)
	}
	v6, ok := node2.Interface("vxlan-v6.calico")
	if !ok || v6.VXLAN == nil || v6.VXLAN.Local != netip.MustParseAddr("fd00::c0a8:104a") {
		t.Errorf("node2 vxlan-v6.calico = %+v", v6)
	}
	tunnels := map[string]int{}
	for _, l := range g.Links {
		if l.Kind == LinkVXLAN {
			tunnels[l.A.Interface]++
		}
	}
	if tunnels["vxlan.calico"] != 1 || tunnels["vxlan-v6.calico"] != 1 {
		t.Errorf("tunnels = %v, want one per family", tunnels)
	}
	pod, _ := g.Host("web")
	if podEth0, _ := pod.Interface("eth0"); len(podEth0.Addrs) != 2 || podEth0.Addrs[1].String() != "fd00:10:244:2::2/128" {
		t.Errorf("pod eth0 = %v", podEth0.Addrs)
	}
	for _, f := range Formats() {
		var b bytes.Buffer
		if err := Render(&b, g, Format(f)); err != nil || !strings.Contains(b.String(), "node2") {
			t.Errorf("render %s: %v", f, err)
		}
	}
}
