package scenarios

import (
	"fmt"
	"net/netip"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// nodePortLab is seed 004's lab with the CNI variant left open: the client
// 192.168.55.230 on its own LAN, HOSTA 192.168.16.73 and HOSTB
// 192.168.16.139 on a /20.
const nodePortLab = `
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: "{{NAME}}"}
spec:
  cni: {{CNI}}
  podSubnet: 10.100.0.0/16
  serviceSubnet: 10.254.0.0/16
  proxy: {mode: iptables}
  nodes:
  - {name: hosta, ip: 192.168.16.73/20, podCIDR: 10.100.40.0/24}
  - {name: hostb, ip: 192.168.16.139/20, podCIDR: 10.100.81.0/24}
  clients:
  - {name: client, ip: 192.168.55.230/24}
`

// httpserver is seed 004's workload (one pod on HOSTB with the article's
// IP, a NodePort Service with two ports), the same Service with
// externalTrafficPolicy Local, and a pod on HOSTA to send pod traffic from.
const httpserver = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: httpserver}
spec:
  replicas: 1
  selector: {matchLabels: {caicloud-app: httpserver}}
  template:
    metadata:
      labels: {caicloud-app: httpserver}
      annotations: {cni.projectcalico.org/ipAddrs: '["10.100.81.180"]'}
    spec:
      nodeName: hostb
      containers:
      - name: httpserver
        image: svclab/netexec:dev
        ports: [{name: http, containerPort: 3000}, {name: admin, containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: httpserver}
spec:
  type: NodePort
  clusterIP: 10.254.112.35
  selector: {caicloud-app: httpserver}
  ports:
  - {name: http, port: 3000, targetPort: http, nodePort: 30000}
  - {name: admin, port: 8080, targetPort: admin, nodePort: 30080}
---
apiVersion: v1
kind: Service
metadata: {name: httpserver-local}
spec:
  type: NodePort
  externalTrafficPolicy: Local
  selector: {caicloud-app: httpserver}
  ports:
  - {name: http, port: 3000, targetPort: http, nodePort: 30001}
---
apiVersion: v1
kind: Pod
metadata: {name: probe-a}
spec:
  nodeName: hosta
  containers: [{name: client, image: svclab/netexec:dev}]
`

var _ = Describe("cross-node NodePort with SNAT", Label("iptables", "nodeport", "multi-node"), func() {
	for _, cni := range []string{"flannel-vxlan", "calico-proxyarp", "canal"} {
		Context("on "+cni, Ordered, func() {
			const n = 100 // connections per traffic run; the assertions are exact counts
			var (
				lab       *netnslab.Lab
				podIP     = netip.MustParseAddr("10.100.81.180")
				nodeA     = netip.MustParseAddr("192.168.16.73")
				nodeB     = netip.MustParseAddr("192.168.16.139")
				clientIP  = netip.MustParseAddr("192.168.55.230")
				clusterIP = netip.MustParseAddr("10.254.112.35")
				overlayA  netip.Addr
				vxlanDev  string
			)

			BeforeAll(func(ctx SpecContext) {
				var err error
				lab, err = netnslab.NewLab(ctx, roottest.UniqueName("np"), strings.ReplaceAll(nodePortLab, "{{CNI}}", cni), binary)
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
				Expect(lab.Apply(ctx, httpserver)).To(Succeed())
				plan, err := network.PlanLab(lab.Topology)
				Expect(err).NotTo(HaveOccurred())
				a, _ := plan.Host("hosta")
				overlayA, vxlanDev = a.Node.VTEP.Addr, a.Node.VTEP.Device
			})

			// clientIPs runs traffic asking /clientip and returns, per
			// connection, the client's own address and what the pod saw.
			clientIPs := func(from, target string, count int) (*traffic.Result, map[netip.AddrPort]netip.AddrPort) {
				GinkgoHelper()
				res, err := lab.Lab.Traffic(from, traffic.Options{Target: target, Connections: count, Path: "/clientip"}, labOpts())
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Succeeded).To(Equal(count), kit.DescribeTraffic(res))
				seen := map[netip.AddrPort]netip.AddrPort{}
				for _, c := range res.Connections {
					seen[netip.MustParseAddrPort(c.LocalAddress)] = netip.MustParseAddrPort(c.Backend)
				}
				return res, seen
			}

			It("forwards client → HOSTA:30000 over the overlay to the pod on HOSTB, SNATed to HOSTA's overlay address", func() {
				chains := nodePortChains()
				beforeSave := must(lab.IPTablesSave("hosta", "nat", true))
				vxA, err := lab.LinkStats("hosta", vxlanDev)
				Expect(err).NotTo(HaveOccurred())
				vxB, err := lab.LinkStats("hostb", vxlanDev)
				Expect(err).NotTo(HaveOccurred())

				target := netip.AddrPortFrom(nodeA, 30000)
				_, seen := clientIPs("client", target.String(), n)
				for local, saw := range seen {
					Expect(local.Addr()).To(Equal(clientIP))
					Expect(saw.Addr()).To(Equal(overlayA), "the pod saw %s instead of HOSTA's %s address", saw, vxlanDev)
				}

				By("HOSTA's conntrack: client → HOSTA:30000, reply pod:3000 → HOSTA's overlay address, DNAT and SNAT")
				flowsA, err := lab.Conntrack("hosta")
				Expect(err).NotTo(HaveOccurred())
				flowsB, err := lab.Conntrack("hostb")
				Expect(err).NotTo(HaveOccurred())
				for local, saw := range seen {
					a := findFlow(flowsA, local, target)
					Expect(a).NotTo(BeNil(), "HOSTA has an entry for %s → %s", local, target)
					Expect(a.Reply.Src).To(Equal(netip.AddrPortFrom(podIP, 3000)), "%s", a)
					Expect(a.Reply.Dst).To(Equal(saw), "%s: the SNAT address:port is what the pod saw", a)
					Expect(a.DstNAT()).To(BeTrue(), "%s", a)
					Expect(a.SrcNAT()).To(BeTrue(), "%s", a)
					b := findFlow(flowsB, saw, netip.AddrPortFrom(podIP, 3000))
					Expect(b).NotTo(BeNil(), "HOSTB has an entry for %s → pod", saw)
					Expect(b.Reply.Src).To(Equal(netip.AddrPortFrom(podIP, 3000)))
					Expect(b.Reply.Dst).To(Equal(saw))
					Expect(b.DstNAT() || b.SrcNAT()).To(BeFalse(), "HOSTB does no NAT: %s", b)
				}

				By("HOSTA's counters moved by exactly the number of connections at every hop")
				afterSave := must(lab.IPTablesSave("hosta", "nat", true))
				for _, hop := range chains {
					before, after := findRule(beforeSave, hop.chain, hop.match), findRule(afterSave, hop.chain, hop.match)
					Expect(after.Packets-before.Packets).To(Equal(int64(n)), "%s rule %q", hop.chain, after.Spec)
				}

				By("the packets crossed the overlay: " + vxlanDev + " counters moved on both nodes")
				vxA2, _ := lab.LinkStats("hosta", vxlanDev)
				vxB2, _ := lab.LinkStats("hostb", vxlanDev)
				Expect(vxA2.TxPackets-vxA.TxPackets).To(BeNumerically(">=", 3*n), "HOSTA sent SYN, request and ACKs of each connection")
				Expect(vxB2.RxPackets - vxB.RxPackets).To(BeNumerically(">=", 3*n))
				Expect(vxB2.TxPackets-vxB.TxPackets).To(BeNumerically(">=", 2*n), "HOSTB sent the replies back")
				Expect(vxA2.RxPackets - vxA.RxPackets).To(BeNumerically(">=", 2*n))
			})

			It("with externalTrafficPolicy Local keeps the client's IP via HOSTB and drops via HOSTA", func() {
				_, seen := clientIPs("client", netip.AddrPortFrom(nodeB, 30001).String(), 10)
				for local, saw := range seen {
					Expect(saw).To(Equal(local), "the pod sees the real client address: no SNAT")
				}
				res, err := lab.Lab.Traffic("client", traffic.Options{Target: netip.AddrPortFrom(nodeA, 30001).String(), Connections: 3, Timeout: 500e6}, labOpts())
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Failures).To(Equal(map[traffic.FailureKind]int{traffic.FailureTimeout: 3}), "HOSTA has no local endpoint: dropped, %s", kit.DescribeTraffic(res))
			})

			It("does not masquerade pod → ClusterIP across nodes, but does node → ClusterIP from outside the cluster CIDR", func() {
				target := netip.AddrPortFrom(clusterIP, 3000).String()
				_, seen := clientIPs("probe-a", target, 10)
				for local, saw := range seen {
					Expect(saw).To(Equal(local), "pod-to-pod through the Service keeps the pod's address")
				}
				_, seen = clientIPs("hosta", target, 10)
				for _, saw := range seen {
					Expect(saw.Addr()).To(Equal(overlayA), "HOSTA's own traffic (source %s) is masqueraded", nodeA)
				}
			})
		})
	}
})

// nodePortHop names a rule on HOSTA that every client → HOSTA:30000
// connection passes through: the chain and a substring of the rule.
type nodePortHop struct{ chain, match string }

func nodePortChains() []nodePortHop {
	svc := kit.UpstreamChain("KUBE-SVC-", "default/httpserver:http", "tcp")
	ext := kit.UpstreamChain("KUBE-EXT-", "default/httpserver:http", "tcp")
	sep := kit.UpstreamChain("KUBE-SEP-", "default/httpserver:http", "tcp", "10.100.81.180:3000")
	return []nodePortHop{
		{"KUBE-NODEPORTS", "--dport 30000 -j " + ext},
		{ext, "-j KUBE-MARK-MASQ"},
		{ext, "-j " + svc},
		{svc, "-j " + sep},
		{sep, "-j DNAT --to-destination 10.100.81.180:3000"},
		{"KUBE-POSTROUTING", "-j MASQUERADE"},
	}
}

func findRule(save, chain, match string) kit.Rule {
	GinkgoHelper()
	for _, r := range kit.Rules(save, chain) {
		if strings.Contains(r.Spec, match) {
			return r
		}
	}
	Fail(fmt.Sprintf("no rule matching %q in chain %s", match, chain))
	return kit.Rule{}
}

func findFlow(flows []conntrack.Flow, src, dst netip.AddrPort) *conntrack.Flow {
	for i := range flows {
		if flows[i].Orig.Src == src && flows[i].Orig.Dst == dst {
			return &flows[i]
		}
	}
	return nil
}
