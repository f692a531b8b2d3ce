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

// web is the workload of the split and ladder scenarios, read back after
// it is applied.
type web struct {
	ws    *kit.Workspace
	svc   *corev1.Service
	pods  []corev1.Pod // app=web, by name
	probe corev1.Pod
	nodes []kit.Node
}

// newWeb makes a workspace running webService(replicas) for one Ordered
// container.
func (s *suite) newWeb(prefix string, replicas int) *web {
	w := &web{}
	w.ws = s.workspace(prefix, 1, func(context.Context, kit.Workspace) string { return s.webService(replicas) })
	BeforeAll(func(ctx SpecContext) {
		ws := *w.ws
		var err error
		w.svc, err = ws.Service(ctx, "web")
		Expect(err).NotTo(HaveOccurred())
		w.pods, err = ws.Pods(ctx, "web")
		Expect(err).NotTo(HaveOccurred())
		Expect(w.pods).To(HaveLen(replicas))
		probes, err := ws.Pods(ctx, "probe")
		Expect(err).NotTo(HaveOccurred())
		Expect(probes).To(HaveLen(1))
		w.probe = probes[0]
		w.nodes, err = ws.Nodes(ctx)
		Expect(err).NotTo(HaveOccurred())
	})
	return w
}

func (w *web) vip() netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr(w.svc.Spec.ClusterIP), 80)
}

// fromProbe is the probe pod as a client; fromOutside is a client
// outside the pod network entering at the first node.
func (w *web) fromProbe() kit.Client {
	return kit.Client{Pod: w.probe.Name, Node: w.probe.Spec.NodeName}
}
func (w *web) fromOutside() kit.Client { return kit.Client{Node: w.nodes[0].Name} }

// split sends n connections from a client to the Service and checks
// where each went: every connection answered by one of the Service's
// pods, and — against the kernel of the node the connections enter at —
// one conntrack entry per connection (DNAT to the pod that answered;
// masqueraded exactly when the client is outside the pod network) and,
// in iptables mode, KUBE-SVC counters that account for every connection.
// It returns the per-pod counts (in pod-name order) and, in iptables
// mode, the per-rule counter deltas of the KUBE-SVC chain.
func (w *web) split(ctx context.Context, from kit.Client, n int) (counts []float64, ruleDeltas []int64) {
	GinkgoHelper()
	ws := *w.ws
	node := from.Node
	mode, err := ws.ProxyMode(ctx, node)
	Expect(err).NotTo(HaveOccurred())
	svcChain := kit.UpstreamChain("KUBE-SVC-", w.svc.Namespace+"/"+w.svc.Name, "tcp")
	counters := func() []kit.Rule {
		save, err := ws.IPTablesSave(ctx, node, "nat", true)
		Expect(err).NotTo(HaveOccurred())
		return kit.Rules(save, svcChain)
	}
	var before []kit.Rule
	if mode == "iptables" {
		before = counters()
	}
	res, err := ws.Traffic(ctx, from, w.vip(), n)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Succeeded).To(Equal(n), "every connection answers: %s", kit.DescribeTraffic(res))
	Expect(res.Backends).To(HaveLen(len(w.pods)), "only the Service's pods answer, all of them: %v", res.Backends)
	for _, name := range podNames(w.pods) {
		counts = append(counts, float64(res.Backends[name]))
	}

	if mode == "iptables" {
		after := counters()
		ruleDeltas, err = kit.Delta(before, after)
		Expect(err).NotTo(HaveOccurred())
		var toEndpoints int64
		for i, r := range after {
			target := jumpTarget(r.Spec)
			if target == "KUBE-MARK-MASQ" {
				want := int64(0)
				if from.Pod == "" {
					want = int64(n)
				}
				Expect(ruleDeltas[i]).To(Equal(want), "masquerade rule %q counts the connections from outside the pod network", r.Spec)
				continue
			}
			toEndpoints += ruleDeltas[i]
			backend := ""
			for _, p := range w.pods {
				if sepChain(w.svc.Namespace+"/"+w.svc.Name, netip.MustParseAddr(p.Status.PodIP), 8080) == target {
					backend = p.Name
				}
			}
			Expect(backend).NotTo(BeEmpty(), "rule %q jumps to the KUBE-SEP chain of one of the pods", r.Spec)
			Expect(ruleDeltas[i]).To(Equal(int64(res.Backends[backend])), "the counter of %q equals the connections %s answered", r.Spec, backend)
		}
		Expect(toEndpoints).To(Equal(int64(n)), "the KUBE-SVC rules account for every connection")
	}

	// Conntrack on the node the connections entered at.
	sources := kit.ClientAddrs(res)
	Expect(sources).To(HaveLen(n), "every connection had a client address of its own")
	backendOf := map[netip.AddrPort]string{}
	for _, c := range res.Connections {
		backendOf[netip.MustParseAddrPort(c.LocalAddress)] = c.Backend
	}
	podIP := map[string]netip.Addr{}
	masqTo := map[string]netip.Addr{}
	for _, p := range w.pods {
		podIP[p.Name] = netip.MustParseAddr(p.Status.PodIP)
		if from.Pod == "" {
			masqTo[p.Name], err = ws.RouteSource(ctx, node, podIP[p.Name])
			Expect(err).NotTo(HaveOccurred())
		}
	}
	mine := trackedFlows(ctx, ws, node, w.vip(), sources)
	// One entry per connection — except that the kernel may end a
	// finished connection's entry early: when a new connection's tuple
	// would clash with the reply tuple of an entry in TIME_WAIT, NAT
	// takes the tuple over and destroys that entry (seen with
	// `conntrack -E -e DESTROY`: entries destroyed with 119 s of TIME_WAIT
	// left). A reply tuple can only clash with a client's connection when
	// the masquerade address is the client's own (a local pod behind a
	// cali veth, which has no address: the node's IP is the source), so an
	// entry may be missing only then.
	tracked := map[netip.AddrPort]bool{}
	for _, f := range mine {
		tracked[f.Orig.Src] = true
	}
	taken := 0
	for src := range sources {
		if tracked[src] {
			continue
		}
		pod := backendOf[src]
		Expect(from.Pod == "" && masqTo[pod] == src.Addr()).To(BeTrue(),
			"no conntrack entry on %s for the connection from %s (answered by %s), and none of its tuples could be taken over", node, src, pod)
		taken++
	}
	if taken > 0 {
		By(fmt.Sprintf("%d of %d entries taken over by later connections (masqueraded to the client's own address on %s)", taken, n, from.Node))
	}
	for _, f := range mine {
		pod := backendOf[f.Orig.Src]
		Expect(f.Reply.Src).To(Equal(netip.AddrPortFrom(podIP[pod], 8080)), "conntrack %v: the reply comes from the pod that answered (%s)", f, pod)
		Expect(f.DstNAT()).To(BeTrue(), "conntrack %v: DNAT status bit", f)
		if from.Pod == "" {
			Expect(f.Reply.Dst.Addr()).To(Equal(masqTo[pod]), "conntrack %v: masqueraded to %s's address towards %s", f, node, pod)
			Expect(f.SrcNAT()).To(BeTrue(), "conntrack %v: SNAT status bit", f)
		} else {
			Expect(f.Reply.Dst).To(Equal(f.Orig.Src), "conntrack %v: pod-to-Service traffic is not masqueraded", f)
			Expect(f.SrcNAT()).To(BeFalse(), "conntrack %v: no SNAT status bit", f)
		}
	}
	return counts, ruleDeltas
}

// splitSpecs: two pods behind a Service, connections split 50/50.
func (s *suite) splitSpecs() {
	Describe("two-pod 50/50 split", Ordered, Label("distribution"), func() {
		w := s.newWeb("split", 2)

		It("programs the Service: upstream's chains and a 0.5 ladder (iptables), or a numgen map (nftables)", func(ctx SpecContext) {
			expectProgrammed(ctx, *w.ws, w.fromProbe().Node, w.svc, w.pods, 8080)
		})

		It("splits connections from a pod 50/50, not masqueraded, each one counted and tracked", func(ctx SpecContext) {
			n := sampleSize(0.6, 0.4)
			By(fmt.Sprintf("%d connections from pod %s: chi-square at alpha %g; a 60/40 skew is caught with probability ≥ 1 − %g", n, w.probe.Name, alpha, miss))
			counts, _ := w.split(ctx, w.fromProbe(), n)
			expectUniform("probe → web", counts)
		})

		It("splits connections from outside the pod network 50/50, masqueraded", func(ctx SpecContext) {
			n := sampleSize(0.6, 0.4)
			By(fmt.Sprintf("%d connections from outside, entering at %s", n, w.fromOutside().Node))
			counts, _ := w.split(ctx, w.fromOutside(), n)
			expectUniform("outside → web", counts)
		})
	})
}

// ladderSpecs: three pods, the 1/3, 1/2, catch-all ladder.
func (s *suite) ladderSpecs() {
	Describe("three-pod ladder", Ordered, Label("distribution"), func() {
		w := s.newWeb("ladder", 3)

		It("programs the 1/3, 1/2, catch-all ladder (iptables), or a numgen map over 3 (nftables)", func(ctx SpecContext) {
			expectProgrammed(ctx, *w.ws, w.fromProbe().Node, w.svc, w.pods, 8080)
		})

		It("takes 1/3 at the first rule, half the rest at the second, and spreads evenly", func(ctx SpecContext) {
			n := sampleSize(0.4, 0.3, 0.3)
			By(fmt.Sprintf("%d connections from pod %s: each chi-square at alpha %g; a 40/30/30 skew is caught with probability ≥ 1 − %g", n, w.probe.Name, alpha, miss))
			counts, deltas := w.split(ctx, w.fromProbe(), n)
			if deltas != nil {
				first, second, last := float64(deltas[1]), float64(deltas[2]), float64(deltas[3])
				expectShares("first rule (probability 1/3) of all connections", []float64{first, second + last}, []float64{1.0 / 3, 2.0 / 3})
				expectShares("second rule (probability 1/2) of the rest", []float64{second, last}, []float64{0.5, 0.5})
			}
			expectUniform("probe → web over 3 pods", counts)
		})
	})
}
