package graph

import (
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
)

// TestIntegrationGraphMatchesKernel builds clusters/nodeport.yaml, the
// dual-stack example and an IPv6 lab for real with each CNI, attaches two
// pods per node (a dual-stack pod with both addresses), and compares the
// graph with what the kernel holds in every namespace: the same links
// (every one but lo), each of the drawn type, with the drawn master,
// addresses of both families (the kernel's own IPv6 link-local ones left
// out unless the plan adds them) and VXLAN VNI and port. The picture
// claims nothing the kernel does not show and leaves nothing out.
func TestIntegrationGraphMatchesKernel(t *testing.T) {
	roottest.Require(t, "builds a lab's network namespaces")
	for _, file := range []string{"nodeport.yaml", "dual-stack.yaml", "testdata/ipv6.yaml"} {
		for _, cni := range topology.CNIs() {
			t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml")+"/"+string(cni), func(t *testing.T) {
				buildAndCompare(t, file, cni)
			})
		}
	}
}

// buildAndCompare builds the lab of file with cni and two pods per node,
// and compares every host of its graph with the kernel.
func buildAndCompare(t *testing.T, file string, cni topology.CNI) {
	lab := loadCluster(t, file, cni)
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
		if _, err := network.AttachPod(lab, p.Node, network.PodNet{Name: p.Name, IP: p.IP, IPs: p.IPs}); err != nil {
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
		got := kernelAddrs(t, nl, l, i.Addrs)
		want := slices.Clone(i.Addrs)
		slices.SortFunc(want, comparePrefixes)
		if !slices.Equal(got, want) {
			t.Errorf("%s %s: kernel addresses %v, graph %v", h.Name, i.Name, got, i.Addrs)
		}
		if v, ok := l.(*netlink.Vxlan); ok && i.VXLAN != nil && (v.VxlanId != i.VXLAN.VNI || v.Port != i.VXLAN.Port) {
			t.Errorf("%s %s: kernel VNI %d port %d, graph %d %d", h.Name, i.Name, v.VxlanId, v.Port, i.VXLAN.VNI, i.VXLAN.Port)
		}
	}
}

// kernelAddrs are a link's addresses of both families, sorted, without the
// IPv6 link-local ones the kernel adds itself (those drawn are kept).
func kernelAddrs(t *testing.T, nl *netlink.Handle, l netlink.Link, drawn []netip.Prefix) []netip.Prefix {
	t.Helper()
	addrs, err := nl.AddrList(l, unix.AF_UNSPEC)
	if err != nil {
		t.Fatal(err)
	}
	var got []netip.Prefix
	for _, a := range addrs {
		ip, _ := netip.AddrFromSlice(a.IP)
		ones, _ := a.Mask.Size()
		p := netip.PrefixFrom(ip.Unmap(), ones)
		if p.Addr().IsLinkLocalUnicast() && p.Addr().Is6() && !slices.Contains(drawn, p) {
			continue
		}
		got = append(got, p)
	}
	slices.SortFunc(got, comparePrefixes)
	return got
}

func comparePrefixes(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}
