package conformance

import (
	"context"
	"fmt"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// Seed 004's question, on any cluster: a client outside the pod network
// connects to node A's NodePort while the only pod runs on node B. Node A
// DNATs to the pod and must also SNAT (MASQUERADE to its own address
// towards B), or the pod's reply would go straight to the client, which
// would drop it. Whatever proxies Services, the pod must see node A's
// address, not the client's (GET /clientip); where the proxy is
// kube-proxy or svclab's, the conntrack entry on node A shows both
// translations.
func (s *suite) nodePortSpecs(f familyRun) {
	Describe(f.text("cross-node NodePort with SNAT"), Ordered, f.labels(), Label("nodeport", LabelCrossNode), func() {
		var (
			nodes []kit.Node
			svc   *corev1.Service
			pod   corev1.Pod
		)
		ws := s.workspace(f, "nodeport", 2, func(ctx context.Context, ws kit.Workspace) string {
			var err error
			nodes, err = ws.Nodes(ctx)
			Expect(err).NotTo(HaveOccurred())
			return s.nodePortService(nodes[1].Name)
		})
		BeforeAll(func(ctx SpecContext) {
			var err error
			svc, err = (*ws).Service(ctx, "echo")
			Expect(err).NotTo(HaveOccurred())
			pods, err := (*ws).Pods(ctx, "echo")
			Expect(err).NotTo(HaveOccurred())
			Expect(pods).To(HaveLen(1))
			pod = pods[0]
			Expect(pod.Spec.NodeName).To(Equal(nodes[1].Name))
		})
		s.evidenceOnFailure(func() evidenceSubject { return nodePortEvidence(*ws, svc, nodes) }) // evidence.go

		It("answers on node A's NodePort from the pod on node B, which sees node A's address, not the client's", func(ctx SpecContext) {
			const n = 50
			a, b := nodes[0], nodes[1]
			target := netip.AddrPortFrom(a.IP, uint16(svc.Spec.Ports[0].NodePort))
			podAddr := netip.AddrPortFrom(netip.MustParseAddr(pod.Status.PodIP), 8080)
			By(fmt.Sprintf("%d connections from outside the pod network (via %s) to %s (node %s); the pod %s runs on %s", n, b.Name, target, a.Name, podAddr, b.Name))
			res, err := (*ws).Traffic(ctx, kit.Client{Node: b.Name}, target, n)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Succeeded).To(Equal(n), "every connection answers: %s", kit.DescribeTraffic(res))
			Expect(res.Backends).To(Equal(map[string]int{pod.Name: n}), "the one pod answers")

			masq, err := (*ws).RouteSource(ctx, a.Name, podAddr.Addr())
			Expect(err).NotTo(HaveOccurred())
			p := s.proxy(ctx)
			expectSeenFrom(ctx, *ws, kit.Client{Node: b.Name}, target, masq, p)
			if reason := p.NotKubeProxyReason(); reason != "" {
				By("conntrack entries not checked: " + reason)
				return
			}
			mine := trackedFlows(ctx, *ws, a.Name, target, kit.ClientAddrs(res))
			Expect(mine).To(HaveLen(n), "one conntrack entry per connection on %s", a.Name)
			for _, f := range mine {
				Expect(f.Reply.Src).To(Equal(podAddr), "conntrack %v: DNAT to the pod on %s", f, b.Name)
				Expect(f.DstNAT()).To(BeTrue(), "conntrack %v: DNAT status bit", f)
				Expect(f.Reply.Dst.Addr()).To(Equal(masq), "conntrack %v: SNAT to %s's address towards the pod (%s)", f, a.Name, masq)
				Expect(f.Reply.Dst.Addr()).NotTo(Equal(f.Orig.Src.Addr()), "conntrack %v: the pod does not see the client", f)
				Expect(f.SrcNAT()).To(BeTrue(), "conntrack %v: SNAT status bit", f)
			}
		})
	})
}

// expectSeenFrom asks GET /clientip over connections from client to
// target: every one answers, and the address the pod saw is never the
// client's (the connections were SNATed); where the proxy writes
// kube-proxy's rules (MASQUERADE), it is masq, the entry node's address
// towards the pod.
func expectSeenFrom(ctx context.Context, ws kit.Workspace, client kit.Client, target netip.AddrPort, masq netip.Addr, p kit.Proxy) {
	GinkgoHelper()
	const n = 10
	res, err := ws.TrafficWith(ctx, client, target, kit.TrafficOptions{Connections: n, Path: "/clientip"})
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Succeeded).To(Equal(n), "every /clientip connection answers: %s", kit.DescribeTraffic(res))
	for _, c := range res.Connections {
		seen, err := netip.ParseAddrPort(c.Backend)
		Expect(err).NotTo(HaveOccurred(), "/clientip answered %q", c.Backend)
		from := netip.MustParseAddrPort(c.LocalAddress)
		Expect(seen.Addr()).NotTo(Equal(from.Addr()), "the pod saw the client's own address %s: the NodePort connection was not SNATed", from)
		if p.WritesKubeProxyRules() {
			Expect(seen.Addr()).To(Equal(masq), "the pod saw %s, not the entry node's address towards it (MASQUERADE)", seen)
		}
	}
}
