package scenarios

import (
	"net/netip"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// twoPods are two bare netexec pods behind Service "web" (80 → 8080), one
// on each node.
const twoPods = `
apiVersion: v1
kind: Pod
metadata: {name: web-a, labels: {app: web}}
spec:
  nodeName: hosta
  containers: [{name: netexec, image: svclab/netexec:dev, ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-b, labels: {app: web}}
spec:
  nodeName: hostb
  containers: [{name: netexec, image: svclab/netexec:dev, ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`

// nftablesLab is seed 004's two-node lab on cni, its proxies in mode.
func nftablesLab(cni, mode string) string {
	return strings.ReplaceAll(strings.ReplaceAll(nodePortLab, "{{CNI}}", cni), "proxy: {mode: iptables}", "proxy: {mode: "+mode+"}")
}

// nftTable is `nft list table ip kube-proxy` on a node ("" when missing).
func nftTable(lab *netnslab.Lab, node string) string {
	out, err := lab.Run(node, "nft", "list", "table", "ip", "kube-proxy")
	if err != nil {
		return ""
	}
	return out
}

var _ = Describe("nftables mode", Label("nftables", "nodeport", "multi-node"), func() {
	for _, cni := range []string{"flannel-vxlan", "calico-proxyarp", "canal"} {
		Context("on "+cni, Ordered, func() {
			var (
				lab       *netnslab.Lab
				vip       netip.AddrPort
				pods      map[string]netip.Addr
				overlayA  netip.Addr
				podIP     = netip.MustParseAddr("10.100.81.180")
				nodeA     = netip.MustParseAddr("192.168.16.73")
				clientIP  = netip.MustParseAddr("192.168.55.230")
				nodePortA = netip.AddrPortFrom(nodeA, 30000)
			)

			BeforeAll(func(ctx SpecContext) {
				var err error
				lab, err = netnslab.NewLab(ctx, roottest.UniqueName("nft"), nftablesLab(cni, "nftables"), binary)
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
				Expect(lab.Apply(ctx, httpserver+"---"+twoPods)).To(Succeed())
				vip, pods = netip.AddrPortFrom(serviceVIP(lab, "web"), 80), podIPs(lab, "web")
				plan, err := network.PlanLab(lab.Topology)
				Expect(err).NotTo(HaveOccurred())
				a, _ := plan.Host("hosta")
				overlayA = a.Node.VTEP.Addr
			})

			It("programs table ip kube-proxy, and /proxyMode says nftables", func() {
				for _, n := range []string{"hosta", "hostb"} {
					Expect(lab.Run(n, "curl", "-s", "localhost:10249/proxyMode")).To(Equal("nftables"), "/proxyMode on %s", n)
					table := nftTable(lab, n)
					Expect(table).To(ContainSubstring("numgen random mod 2"), "%s: web's service chain balances over its two pods", n)
					Expect(table).To(ContainSubstring(vip.Addr().String()+" . tcp . 80 : goto service-"), "%s: web's cluster IP in service-ips", n)
					Expect(table).To(ContainSubstring("tcp . 30000 : goto external-"), "%s: the node port in service-nodeports", n)
					Expect(must(lab.IPTablesSave(n, "nat", false))).NotTo(ContainSubstring("KUBE-SERVICES"), "%s: no iptables-mode chains", n)
				}
			})

			It("splits client → web evenly over the two pods", func() {
				n := kit.SampleSize(0.6, 0.4)
				res, err := lab.Traffic("client", vip.String(), n)
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Succeeded).To(Equal(n), kit.DescribeTraffic(res))
				kit.ExpectUniform("nftables mode on "+cni+", client → web", countsOf(res.Backends, pods))
			})

			It("forwards client → HOSTA:30000 to the pod on HOSTB, SNATed to HOSTA's overlay address, DNAT and SNAT in conntrack", func() {
				const n = 50
				res, err := lab.Lab.Traffic("client", traffic.Options{Target: nodePortA.String(), Connections: n, Path: "/clientip"}, labOpts())
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Succeeded).To(Equal(n), kit.DescribeTraffic(res))
				flows, err := lab.Conntrack("hosta")
				Expect(err).NotTo(HaveOccurred())
				for _, c := range res.Connections {
					local, saw := netip.MustParseAddrPort(c.LocalAddress), netip.MustParseAddrPort(c.Backend)
					Expect(local.Addr()).To(Equal(clientIP))
					Expect(saw.Addr()).To(Equal(overlayA), "the pod saw %s, not HOSTA's overlay address", saw)
					f := findFlow(flows, local, nodePortA)
					Expect(f).NotTo(BeNil(), "HOSTA has a conntrack entry for %s → %s", local, nodePortA)
					Expect(f.Reply.Src).To(Equal(netip.AddrPortFrom(podIP, 3000)), "%s", f)
					Expect(f.Reply.Dst).To(Equal(saw), "%s: the SNAT address:port is what the pod saw", f)
					Expect(f.DstNAT() && f.SrcNAT()).To(BeTrue(), "%s", f)
				}
			})
		})
	}
})

var _ = Describe("switching the proxy mode iptables → nftables → iptables through the kube-proxy ConfigMap", Ordered, Label("nftables", "mode-switch"), func() {
	var (
		lab  *netnslab.Lab
		vip  netip.AddrPort
		pods map[string]netip.Addr
	)
	webChain := func() string { return kit.UpstreamChain("KUBE-SVC-", "default/web", "tcp") }

	BeforeAll(func(ctx SpecContext) {
		var err error
		lab, err = netnslab.NewLab(ctx, roottest.UniqueName("nsw"), nftablesLab("canal", "iptables"), binary)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
		Expect(lab.Apply(ctx, twoPods)).To(Succeed())
		vip, pods = netip.AddrPortFrom(serviceVIP(lab, "web"), 80), podIPs(lab, "web")
		Expect(must(lab.IPTablesSave("hosta", "nat", false))).To(ContainSubstring(webChain()))
		Expect(nftTable(lab, "hosta")).To(BeEmpty())
	})

	It("runs nftables after the ConfigMap says nftables: the iptables chains are removed, traffic flows through the table", func(ctx SpecContext) {
		switchMode(ctx, lab, "nftables", "")
		for _, n := range []string{"hosta", "hostb"} {
			Expect(nftTable(lab, n)).To(ContainSubstring("numgen random mod 2"), "%s", n)
			Expect(must(lab.IPTablesSave(n, "nat", false))).NotTo(ContainSubstring("KUBE-SVC-"), "%s: starting in nftables mode removed the iptables mode's chains", n)
			left, mode, err := lab.Leftovers(n)
			Expect(err).NotTo(HaveOccurred())
			Expect(mode).To(Equal("nftables"))
			Expect(left.ForeignTo("nftables").Empty()).To(BeTrue(), "%s: nothing left by the iptables mode: %s", n, left.ForeignTo("nftables"))
			Expect(left.NFTables).To(ConsistOf("ip"))
		}
		res, err := lab.Traffic("client", vip.String(), 60)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(60), kit.DescribeTraffic(res))
		Expect(res.Backends).To(HaveLen(len(pods)), "both pods answer: %v", res.Backends)
	})

	It("switches back to iptables: the ladder is back and the nftables table gone", func(ctx SpecContext) {
		switchMode(ctx, lab, "", "")
		for _, n := range []string{"hosta", "hostb"} {
			Expect(nftTable(lab, n)).To(BeEmpty(), "%s: starting in iptables mode removed table ip kube-proxy", n)
			rules := kit.Rules(must(lab.IPTablesSave(n, "nat", false)), webChain())
			Expect(rules).To(HaveLen(3), "%s: the masquerade rule, then one rule per endpoint", n)
			Expect(rules[1].Spec).To(ContainSubstring("--probability 0.50000000000"), "%s", n)
			left, _, err := lab.Leftovers(n)
			Expect(err).NotTo(HaveOccurred())
			Expect(left.NFTables).To(BeEmpty())
		}
		res, err := lab.Traffic("client", vip.String(), 60)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Succeeded).To(Equal(60), kit.DescribeTraffic(res))
	})
})
