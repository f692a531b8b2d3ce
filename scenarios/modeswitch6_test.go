package scenarios

import (
	"fmt"
	"net/netip"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// dualTwoNodeLab is twoNodeLab("iptables") made dual-stack (kind's
// networking.ipFamily: dual, IPv4 primary). The IPv6 values it leaves out
// are derived: hosta fd00::c0a8:1049/116, hostb fd00::c0a8:108b/116, the
// client fd00::c0a8:37e6/120, the nodes' IPv6 pod ranges the /64s
// fd00:10:244:28::/64 and fd00:10:244:51::/64.
func dualTwoNodeLab() string {
	lab := strings.Replace(twoNodeLab("iptables"),
		"  podSubnet: 10.100.0.0/16\n  serviceSubnet: 10.254.0.0/16\n",
		"  ipFamily: dual\n  podSubnet: 10.100.0.0/16,fd00:10:244::/56\n  serviceSubnet: 10.254.0.0/16,fd00:10:96::/112\n", 1)
	if !strings.Contains(lab, "ipFamily: dual") {
		panic("dualTwoNodeLab: nodePortLab's subnets changed")
	}
	return lab
}

// dualKubeProxyConfig is kubeProxyConfig with the dual-stack clusterCIDR
// kubeadm writes (the comma pair), so that each family's proxier knows
// the pod range of its family.
func dualKubeProxyConfig(mode string) string {
	return strings.Replace(kubeProxyConfig(mode, ""), "clusterCIDR: 10.100.0.0/16", "clusterCIDR: 10.100.0.0/16,fd00:10:244::/56", 1)
}

// dualStackWeb is ipvsPods' three pods behind a PreferDualStack NodePort
// Service "web": a cluster IP per family.
func dualStackWeb() string {
	return strings.Replace(ipvsPods(), "  selector: {app: web}\n",
		"  type: NodePort\n  ipFamilyPolicy: PreferDualStack\n  selector: {app: web}\n", 1)
}

// dualStackFacts are what the lab gave the Service and its pods.
type dualStackFacts struct {
	// vip4 and vip6 are the Service's cluster IPs (port 80), one per family.
	vip4, vip6 netip.AddrPort
	// nodePort is the Service's node port (both families).
	nodePort uint16
	// pods6 maps the pods to their IPv6 addresses.
	pods6 map[string]netip.Addr
	// hosta6 and hostb6 are the nodes' IPv6 addresses.
	hosta6, hostb6 netip.Addr
}

// readDualStackFacts reads the Service's cluster IPs and node port, the
// pods' IPv6 addresses and the nodes' IPv6 addresses.
func readDualStackFacts(lab *netnslab.Lab) dualStackFacts {
	GinkgoHelper()
	objs, _, err := lab.Store.ReadObjects()
	Expect(err).NotTo(HaveOccurred())
	svc := objs.Service("default", "web")
	Expect(svc).NotTo(BeNil())
	Expect(svc.Spec.IPFamilies).To(Equal([]corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}), "PreferDualStack on a dual lab: both families, IPv4 first")
	var f dualStackFacts
	vip4, ok := kit.FirstOfFamily(svc.Spec.ClusterIPs, corev1.IPv4Protocol)
	Expect(ok).To(BeTrue(), "an IPv4 cluster IP in %v", svc.Spec.ClusterIPs)
	vip6, ok := kit.FirstOfFamily(svc.Spec.ClusterIPs, corev1.IPv6Protocol)
	Expect(ok).To(BeTrue(), "an IPv6 cluster IP in %v", svc.Spec.ClusterIPs)
	Expect(netip.MustParsePrefix("fd00:10:96::/112").Contains(vip6)).To(BeTrue(), "%s is of the IPv6 service subnet", vip6)
	f.vip4, f.vip6 = netip.AddrPortFrom(vip4, 80), netip.AddrPortFrom(vip6, 80)
	f.nodePort = uint16(svc.Spec.Ports[0].NodePort)
	Expect(f.nodePort).NotTo(BeZero())
	f.pods6 = map[string]netip.Addr{}
	for _, p := range objs.Pods {
		if p.Labels["app"] != "web" {
			continue
		}
		var ips []string
		for _, ip := range p.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
		ip6, ok := kit.FirstOfFamily(ips, corev1.IPv6Protocol)
		Expect(ok).To(BeTrue(), "pod %s has an IPv6 address in %v", p.Name, ips)
		f.pods6[p.Name] = ip6
	}
	Expect(f.pods6).To(HaveLen(3))
	for _, n := range lab.Topology.Spec.Nodes {
		for _, ip := range n.IPs {
			if ip.Addr().Is6() {
				switch n.Name {
				case "hosta":
					f.hosta6 = ip.Addr()
				case "hostb":
					f.hostb6 = ip.Addr()
				}
			}
		}
	}
	Expect(f.hosta6.IsValid() && f.hostb6.IsValid()).To(BeTrue(), "both nodes have an IPv6 address: %v", lab.Topology.Spec.Nodes)
	return f
}

// expectAllConnect makes n connections from the client to target and
// expects every one to succeed; it returns the per-backend counts.
func expectAllConnect(lab *netnslab.Lab, target netip.AddrPort, n int) map[string]int {
	GinkgoHelper()
	res, err := lab.Traffic("client", target.String(), n)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Succeeded).To(Equal(n), "to %s: %s", target, kit.DescribeTraffic(res))
	return res.Backends
}

// ip6ServiceChains lists the KUBE-SVC-* chains in a node's ip6tables nat table.
func ip6ServiceChains(lab *netnslab.Lab, node string) []string {
	GinkgoHelper()
	var out []string
	for _, line := range strings.Split(must(lab.IPTablesSave(node, "nat", false, corev1.IPv6Protocol)), "\n") {
		if strings.HasPrefix(line, ":KUBE-SVC-") {
			out = append(out, strings.Fields(strings.TrimPrefix(line, ":"))[0])
		}
	}
	return out
}

// ipv6VirtualServers are a node's IPVS services of the IPv6 family.
func ipv6VirtualServers(lab *netnslab.Lab, node string) []kit.VirtualServer {
	GinkgoHelper()
	vss, err := lab.IPVS(node)
	Expect(err).NotTo(HaveOccurred())
	var out []kit.VirtualServer
	for _, vs := range vss {
		if vs.Address.Is6() {
			out = append(out, vs)
		}
	}
	return out
}

// nftTable6 is a node's `table ip6 kube-proxy`, or "" when it has none.
func nftTable6(lab *netnslab.Lab, node string) string {
	out, err := lab.Run(node, "nft", "list", "table", "ip6", "kube-proxy")
	if err != nil {
		return ""
	}
	return out
}

var _ = Describe("switching the proxy mode of a dual-stack lab, IPv6 traffic throughout", Ordered, Label("ipvs", "ipv6", "mode-switch"), func() {
	var (
		lab   *netnslab.Lab
		facts dualStackFacts
		chain = kit.UpstreamChain("KUBE-SVC-", "default/web", "tcp")
	)

	BeforeAll(func(ctx SpecContext) {
		skipUnlessIPVS()
		var err error
		lab, err = netnslab.NewLab(ctx, roottest.UniqueName("mode6"), dualTwoNodeLab(), binary)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
		Expect(lab.Apply(ctx, dualStackWeb())).To(Succeed())
		facts = readDualStackFacts(lab)
	})

	It("starts in iptables mode: the ladder in ip6tables, an even split over the IPv6 cluster IP, the IPv6 NodePort across nodes", func() {
		rules := kit.Rules(must(lab.IPTablesSave("hosta", "nat", false, corev1.IPv6Protocol)), chain)
		Expect(rules).To(HaveLen(4), "ip6tables has web's KUBE-SVC chain (the IPv4 one's name)")
		Expect(rules[1].Spec).To(ContainSubstring("--probability 0.33333333349"))
		expectBaselineSplit("iptables mode, client → [IPv6 cluster IP]", countsOf(expectAllConnect(lab, facts.vip6, baselineConnections()), facts.pods6))
		backends := expectAllConnect(lab, netip.AddrPortFrom(facts.hosta6, facts.nodePort), 30)
		Expect(backends).To(HaveKey("web-1"), "hosta's IPv6 NodePort forwards to the pod on hostb too: %v", backends)
		expectAllConnect(lab, facts.vip4, 30)
	})

	It("runs IPVS in IPv6 after the ConfigMap says ipvs: the pods' IPv6 real servers, kube-ipvs0 with the IPv6 cluster IP, an exact round robin", func(ctx SpecContext) {
		switchModeWith(ctx, lab, dualKubeProxyConfig("ipvs"), "ipvs")
		vs := virtualServer(lab, "hosta", facts.vip6)
		Expect(vs.Scheduler).To(Equal("rr"))
		var got, want []string
		for _, rs := range vs.RealServers {
			Expect(rs.Weight).To(Equal(1))
			got = append(got, rs.Key())
		}
		for _, ip := range facts.pods6 {
			want = append(want, netip.AddrPortFrom(ip, 8080).String())
		}
		Expect(got).To(ConsistOf(want), "the IPv6 real servers are the pods' IPv6 endpoints")
		Expect(virtualServer(lab, "hostb", netip.AddrPortFrom(facts.hostb6, facts.nodePort)).RealServers).To(HaveLen(3), "the IPv6 NodePort's virtual server on hostb's IPv6 address")
		Expect(must(lab.Run("hosta", "ipvsadm", "-Ln"))).To(ContainSubstring(fmt.Sprintf("TCP  %s rr", facts.vip6)))
		Expect(must(lab.Run("hosta", "ip", "-6", "addr", "show", "kube-ipvs0"))).To(ContainSubstring("inet6 " + facts.vip6.Addr().String() + "/128"))

		const n = 300
		backends := expectAllConnect(lab, facts.vip6, n)
		Expect(backends).To(HaveLen(3))
		for name, count := range backends {
			Expect(count).To(BeNumerically("~", n/3, 1), "rr gives %s a third: %v", name, backends)
		}
		expectAllConnect(lab, netip.AddrPortFrom(facts.hosta6, facts.nodePort), 30)
		expectAllConnect(lab, facts.vip4, 30)
	})

	It("leaves the ip6tables KUBE-SVC chains behind, as upstream; --cleanup removes both families' and IPv6 keeps flowing", func(ctx SpecContext) {
		Expect(ip6ServiceChains(lab, "hosta")).To(ContainElement(chain), "the iptables mode's IPv6 chain is a leftover")
		for _, node := range []string{"hosta", "hostb"} {
			must(lab.Run(node, binary, "proxy", "--cleanup"))
		}
		switchModeWith(ctx, lab, dualKubeProxyConfig("ipvs"), "ipvs") // the restart programs IPVS again at once
		for _, node := range []string{"hosta", "hostb"} {
			Expect(ip6ServiceChains(lab, node)).To(BeEmpty(), "no ip6tables KUBE-SVC chain on %s after --cleanup", node)
			Expect(ipv6VirtualServers(lab, node)).NotTo(BeEmpty(), "IPVS in IPv6 again on %s", node)
		}
		Expect(virtualServer(lab, "hosta", facts.vip6).RealServers).To(HaveLen(3))
		expectAllConnect(lab, facts.vip6, 30)
		expectAllConnect(lab, facts.vip4, 30)
	})

	It("switches to nftables: table ip6 kube-proxy, no IPv6 IPVS services left, both families flowing", func(ctx SpecContext) {
		switchModeWith(ctx, lab, dualKubeProxyConfig("nftables"), "nftables")
		for _, node := range []string{"hosta", "hostb"} {
			Expect(nftTable6(lab, node)).To(ContainSubstring("numgen random mod 3"), "web's three IPv6 endpoints in table ip6 kube-proxy on %s", node)
			Expect(nftTable6(lab, node)).To(ContainSubstring(facts.vip6.Addr().String()), "the IPv6 cluster IP in table ip6 kube-proxy on %s", node)
			Expect(ipv6VirtualServers(lab, node)).To(BeEmpty(), "starting in nftables mode removed the IPv6 virtual servers on %s", node)
			Expect(ip6ServiceChains(lab, node)).To(BeEmpty(), "and no ip6tables KUBE-SVC chain on %s", node)
		}
		expectBaselineSplit("nftables mode, client → [IPv6 cluster IP]", countsOf(expectAllConnect(lab, facts.vip6, baselineConnections()), facts.pods6))
		backends := expectAllConnect(lab, netip.AddrPortFrom(facts.hosta6, facts.nodePort), 30)
		Expect(backends).To(HaveKey("web-1"), "hosta's IPv6 NodePort forwards to the pod on hostb too: %v", backends)
		expectAllConnect(lab, facts.vip4, 30)
	})
})
