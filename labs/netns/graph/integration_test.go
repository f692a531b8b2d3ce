package graph

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
)

// TestIntegrationGraphMatchesKernel builds clusters/nodeport.yaml for real
// with each CNI, attaches two pods per node, and compares the graph with
// what the kernel holds in every namespace: the same links (every one but
// lo), each of the drawn type, with the drawn master, IPv4 addresses and
// VXLAN VNI and port. The picture claims nothing the kernel does not show
// and leaves nothing out.
func TestIntegrationGraphMatchesKernel(t *testing.T) {
	roottest.Require(t, "builds a lab's network namespaces")
	for _, cni := range topology.CNIs() {
		t.Run(string(cni), func(t *testing.T) {
			lab := loadCluster(t, "nodeport.yaml", cni)
			lab.Metadata.Name = roottest.UniqueName("graph")
			t.Cleanup(func() {
				if err := network.Destroy(lab.Name()); err != nil {
					t.Errorf("Destroy: %v", err)
				}
			})
			if _, err := network.Build(lab); err != nil {
				t.Fatal(err)
			}
			pods := fixturePods(lab)
			for _, p := range pods {
				if _, err := network.AttachPod(lab, p.Node, network.PodNet{Name: p.Name, IP: p.IP}); err != nil {
					t.Fatal(err)
				}
			}
			g, err := Build(lab, pods)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range g.Hosts {
				compareWithKernel(t, h)
			}
		})
	}
}

func compareWithKernel(t *testing.T, h Host) {
	t.Helper()
	ns, err := netns.GetFromPath("/run/netns/" + h.Namespace)
	if err != nil {
		t.Fatalf("%s: %v", h.Name, err)
	}
	defer ns.Close()
	nl, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatalf("%s: %v", h.Name, err)
	}
	defer nl.Close()
	links, err := nl.LinkList()
	if err != nil {
		t.Fatalf("%s: %v", h.Name, err)
	}
	names := map[int]string{}
	var kernel []string
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
		if l.Attrs().Name != "lo" {
			kernel = append(kernel, l.Attrs().Name)
		}
	}
	var drawn []string
	for _, i := range h.Interfaces {
		drawn = append(drawn, i.Name)
	}
	slices.Sort(kernel)
	slices.Sort(drawn)
	if !slices.Equal(kernel, drawn) {
		t.Errorf("%s: kernel links %v, graph draws %v", h.Name, kernel, drawn)
	}
	for _, i := range h.Interfaces {
		l, err := nl.LinkByName(i.Name)
		if err != nil {
			continue // reported above
		}
		if l.Type() != string(i.Kind) {
			t.Errorf("%s %s: kernel type %s, graph %s", h.Name, i.Name, l.Type(), i.Kind)
		}
		if master := names[l.Attrs().MasterIndex]; master != i.Master {
			t.Errorf("%s %s: kernel master %q, graph %q", h.Name, i.Name, master, i.Master)
		}
		addrs, err := nl.AddrList(l, unix.AF_INET)
		if err != nil {
			t.Fatal(err)
		}
		var got []netip.Prefix
		for _, a := range addrs {
			ip, _ := netip.AddrFromSlice(a.IP.To4())
			ones, _ := a.Mask.Size()
			got = append(got, netip.PrefixFrom(ip, ones))
		}
		if !slices.Equal(got, i.Addrs) {
			t.Errorf("%s %s: kernel addresses %v, graph %v", h.Name, i.Name, got, i.Addrs)
		}
		if v, ok := l.(*netlink.Vxlan); ok && i.VXLAN != nil && (v.VxlanId != i.VXLAN.VNI || v.Port != i.VXLAN.Port) {
			t.Errorf("%s %s: kernel VNI %d port %d, graph %d %d", h.Name, i.Name, v.VxlanId, v.Port, i.VXLAN.VNI, i.VXLAN.Port)
		}
	}
}
