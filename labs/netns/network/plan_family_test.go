package network

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/labs/netns/topology"
)

// familyLab is labYAML of another IP family: the IPv6 addresses and
// ranges derived from the IPv4 ones (hosta's range 10.100.40.0/24 is
// number 40, so fd00:10:244:28::/64).
func familyLab(t testing.TB, family topology.IPFamily, cni topology.CNI) *topology.Lab {
	t.Helper()
	doc := strings.Replace(labYAML, "  cni: CNI\n", "  cni: CNI\n  ipFamily: "+string(family)+"\n", 1)
	return newLab(t, doc, "demo", cni)
}

// familyPodIPs are the addresses of the golden pods on hosta and hostb.
func familyPodIPs(family topology.IPFamily) [][]netip.Addr {
	v4 := []netip.Addr{netip.MustParseAddr("10.100.40.2"), netip.MustParseAddr("10.100.81.2")}
	v6 := []netip.Addr{netip.MustParseAddr("fd00:10:244:28::2"), netip.MustParseAddr("fd00:10:244:51::2")}
	if family == topology.IPFamilyIPv6 {
		return [][]netip.Addr{{v6[0]}, {v6[1]}}
	}
	return [][]netip.Addr{{v4[0], v6[0]}, {v4[1], v6[1]}}
}

// TestPlanGoldenFamilies pins the whole plan of an ipv6 and a dual lab
// of each CNI flavour, as TestPlanGolden does for ipv4, plus a pod on
// each node.
func TestPlanGoldenFamilies(t *testing.T) {
	for _, family := range []topology.IPFamily{topology.IPFamilyIPv6, topology.IPFamilyDual} {
		for _, cni := range topology.CNIs() {
			t.Run(string(family)+"/"+string(cni), func(t *testing.T) {
				lab := familyLab(t, family, cni)
				plan, err := PlanLab(lab)
				if err != nil {
					t.Fatal(err)
				}
				script := plan.Script()
				for i, node := range []string{"hosta", "hostb"} {
					ips := familyPodIPs(family)[i]
					pp, err := PlanPod(lab, node, PodNet{Name: "pod" + string(rune('a'+i)), IP: ips[0], IPs: ips})
					if err != nil {
						t.Fatal(err)
					}
					script += pp.Script()
				}
				golden.Check(t, string(family)+"-"+string(cni)+".sh", []byte(script))
			})
		}
	}
}

// TestPlanFamilyFacts: a dual lab's hosts, LANs, nodes and VTEPs hold
// both families, primary first, and the IPv6 devices are flannel's and
// Calico's.
func TestPlanFamilyFacts(t *testing.T) {
	plan, err := PlanLab(familyLab(t, topology.IPFamilyDual, topology.CNICanal))
	if err != nil {
		t.Fatal(err)
	}
	lan := plan.Router.LANs[0]
	if len(lan.Subnets) != 2 || lan.Subnets[1] != netip.MustParsePrefix("fd00::c0a8:1000/116") || lan.Gateways[1] != netip.MustParseAddr("fd00::c0a8:1ffe") {
		t.Errorf("LAN = %+v", lan)
	}
	a, _ := plan.Host("hosta")
	if len(a.IPs) != 2 || a.Gateways[1] != lan.Gateways[1] {
		t.Errorf("hosta = %+v", a)
	}
	n := a.Node
	if n.VTEPs[0].Device != "flannel.1" || n.VTEPs[1].Device != "flannel-v6.1" || n.VTEPs[1].Addr != netip.MustParseAddr("fd00:10:244:28::") || n.VTEPs[1].Local != a.IPs[1].Addr() {
		t.Errorf("VTEPs = %+v", n.VTEPs)
	}
	if n.PodGateways[1] != netip.MustParseAddr("fe80::ecee:eeff:feee:eeee") {
		t.Errorf("pod gateways = %v", n.PodGateways)
	}
	if len(plan.Router.ServiceSubnets) != 2 || plan.Router.ServiceVias[1] != a.IPs[1].Addr() {
		t.Errorf("router services = %v via %v", plan.Router.ServiceSubnets, plan.Router.ServiceVias)
	}
	calico, err := PlanLab(familyLab(t, topology.IPFamilyIPv6, topology.CNICalicoProxyARP))
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := calico.Host("hosta"); c.Node.VTEP.Device != "vxlan-v6.calico" || len(c.Node.VTEPs) != 1 {
		t.Errorf("calico ipv6 VTEPs = %+v", c.Node.VTEPs)
	}
}

// TestPlanPodFamilyErrors: a dual node's pod needs one address in each
// of its ranges.
func TestPlanPodFamilyErrors(t *testing.T) {
	lab := familyLab(t, topology.IPFamilyDual, topology.CNIFlannelVXLAN)
	cases := []struct {
		ips  []netip.Addr
		want string
	}{
		{[]netip.Addr{netip.MustParseAddr("10.100.40.2")}, "1 pod IPs for a node with 2 pod ranges"},
		{[]netip.Addr{netip.MustParseAddr("10.100.40.2"), netip.MustParseAddr("fd00:10:244:29::2")}, "pod IP fd00:10:244:29::2 is not in the node's podCIDR fd00:10:244:28::/64"},
		{[]netip.Addr{netip.MustParseAddr("10.100.40.2"), netip.MustParseAddr("fd00:10:244:28::1")}, "pod IP fd00:10:244:28::1 is reserved for the node"},
		{[]netip.Addr{netip.MustParseAddr("fd00:10:244:28::2"), netip.MustParseAddr("10.100.40.2")}, "pod IP fd00:10:244:28::2 is not in the node's podCIDR 10.100.40.0/24"},
	}
	for _, c := range cases {
		_, err := PlanPod(lab, "hosta", PodNet{Name: "p", IP: c.ips[0], IPs: c.ips})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("PlanPod(%v) = %v, want %q", c.ips, err, c.want)
		}
	}
	if ip, err := NextPodIP(netip.MustParsePrefix("fd00:10:244:28::/64"), []netip.Addr{netip.MustParseAddr("fd00:10:244:28::2")}); err != nil || ip != netip.MustParseAddr("fd00:10:244:28::3") {
		t.Errorf("NextPodIP(v6) = %v, %v", ip, err)
	}
}
