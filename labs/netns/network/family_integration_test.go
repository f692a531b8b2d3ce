package network

import (
	"maps"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/topology"
)

// TestIntegrationFamilies builds an ipv6 and a dual lab of each CNI on
// the real kernel: pods on two nodes reach each other over IPv6 (and IPv4
// in the dual lab) through the overlay, a client reaches a node over the
// IPv6 underlay, and no lab namespace has an IPv6 route out of the lab.
func TestIntegrationFamilies(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	for _, family := range []topology.IPFamily{topology.IPFamilyIPv6, topology.IPFamilyDual} {
		for _, cni := range topology.CNIs() {
			t.Run(string(family)+"/"+string(cni), func(t *testing.T) { testFamily(t, family, cni) })
		}
	}
}

func testFamily(t *testing.T, family topology.IPFamily, cni topology.CNI) {
	name := uniqueLabName(t)
	lab := familyLab(t, family, cni)
	lab.Metadata.Name = name
	rootBefore := rootIPv6Sysctls(t)
	plan := buildLab(t, lab)
	noTentativeLANAddrs(t, plan)
	ips := familyPodIPs(family)
	pa, err := AttachPod(lab, "hosta", PodNet{Name: "pa", IP: ips[0][0], IPs: ips[0]})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := AttachPod(lab, "hostb", PodNet{Name: "pb", IP: ips[1][0], IPs: ips[1]})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ips[0] {
		mustPing(t, pa.Namespace, ips[1][i].String())
		mustPing(t, pb.Namespace, ips[0][i].String())
	}
	a, _ := plan.Host("hosta")
	v6, _ := a.Node.vtepOf(netip.IPv6Unspecified())
	dev, ok := mustLink(t, nl(t, a.Namespace), a.Namespace, v6.Device).(*netlink.Vxlan)
	if !ok || dev.SrcAddr.String() != v6.Local.String() || dev.VxlanId != v6.VNI || dev.Port != v6.Port || dev.HardwareAddr.String() != v6.MAC.String() {
		t.Errorf("hosta %s = %+v, want local %v id %d port %d mac %v", v6.Device, dev, v6.Local, v6.VNI, v6.Port, v6.MAC)
	}
	mustPing(t, NamespaceName(name, "client"), topology.OfFamily(a.IPs, topology.IPFamilyIPv6).Addr().String())
	noIPv6RouteOut(t, lab, plan)
	if after := rootIPv6Sysctls(t); !maps.Equal(after, rootBefore) {
		t.Errorf("the root namespace's IPv6 sysctls changed: %v, were %v", after, rootBefore)
	}
}

// rootIPv6Sysctls reads the IPv6 knobs a lab sets in its namespaces from
// the root namespace (the test's own), to show that they stay as they were.
func rootIPv6Sysctls(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, conf := range []string{"all", "default"} {
		for _, knob := range []string{"forwarding", "accept_ra", "accept_dad", "proxy_ndp"} {
			key := "net/ipv6/conf/" + conf + "/" + knob
			v, err := readSysctl(key)
			if err != nil {
				t.Fatal(err)
			}
			out[key] = v
		}
	}
	return out
}

// noIPv6RouteOut checks every namespace of the lab: an IPv6 route goes to
// a subnet of the lab (a host LAN, a pod range or subnet, a Service
// subnet) or is link-local, and only hosts and pods have a default route
// (via the router or their node); the router has none.
func noIPv6RouteOut(t *testing.T, lab *topology.Lab, plan *Plan) {
	t.Helper()
	var labPrefixes []netip.Prefix
	labPrefixes = append(labPrefixes, lab.Spec.PodSubnets...)
	labPrefixes = append(labPrefixes, lab.Spec.ServiceSubnets...)
	for _, lan := range plan.Router.LANs {
		labPrefixes = append(labPrefixes, lan.Subnets...)
	}
	linkLocal := netip.MustParsePrefix("fe80::/10")
	namespaces, err := Namespaces(lab.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		rs, err := nl(t, ns).RouteList(nil, unix.AF_INET6)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Type == unix.RTN_BLACKHOLE {
				continue
			}
			p := netip.PrefixFrom(netip.IPv6Unspecified(), 0)
			if r.Dst != nil {
				dst, _ := netip.AddrFromSlice(r.Dst.IP)
				bits, _ := r.Dst.Mask.Size()
				p = netip.PrefixFrom(dst, bits)
			}
			switch {
			case p.Bits() == 0 && ns == plan.Router.Namespace:
				t.Errorf("%s: the router has an IPv6 default route: %+v", ns, r)
			case p.Bits() == 0 && !inLab(r, labPrefixes, linkLocal):
				t.Errorf("%s: an IPv6 default route out of the lab: %+v", ns, r)
			case p.Bits() > 0 && !linkLocal.Overlaps(p) && !overlapsAny(p, labPrefixes):
				t.Errorf("%s: an IPv6 route to %s, outside the lab", ns, p)
			}
		}
	}
}

// inLab says whether a default route's next hop is in the lab (a router
// address on a host's LAN, or a node's link-local or pod gateway).
func inLab(r netlink.Route, labPrefixes []netip.Prefix, linkLocal netip.Prefix) bool {
	gw, ok := netip.AddrFromSlice(r.Gw)
	return ok && (linkLocal.Contains(gw) || overlapsAny(netip.PrefixFrom(gw, 128), labPrefixes))
}

func overlapsAny(p netip.Prefix, set []netip.Prefix) bool {
	for _, q := range set {
		if q.Overlaps(p) {
			return true
		}
	}
	return false
}

// noTentativeLANAddrs checks, right after the lab is built, that no IPv6
// address of the router's LAN bridges, the hosts' eth0 and the nodes' IPv6
// VXLAN devices is tentative:
// a router or node forwarding a packet solicits its next hop from the
// link-local address, and while that is in DAD the first connections
// through the lab are lost (noLinkLocalDAD).
func noTentativeLANAddrs(t *testing.T, plan *Plan) {
	t.Helper()
	links := map[string][]string{}
	for _, lan := range plan.Router.LANs {
		links[plan.Router.Namespace] = append(links[plan.Router.Namespace], lan.Bridge)
	}
	for _, h := range plan.Hosts {
		links[h.Namespace] = append(links[h.Namespace], "eth0")
		if h.Node == nil {
			continue
		}
		for _, v := range h.Node.VTEPs {
			if v.Addr.Is6() {
				links[h.Namespace] = append(links[h.Namespace], v.Device)
			}
		}
	}
	for ns, names := range links {
		h := nl(t, ns)
		for _, name := range names {
			link, err := h.LinkByName(name)
			if err != nil {
				t.Fatalf("%s %s: %v", ns, name, err)
			}
			addrs, err := h.AddrList(link, unix.AF_INET6)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range addrs {
				if a.Flags&unix.IFA_F_TENTATIVE != 0 {
					t.Errorf("%s %s: %s is tentative (in DAD) after the lab was built", ns, name, a.IPNet)
				}
			}
		}
	}
}
