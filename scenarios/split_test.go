package scenarios

import (
	"fmt"
	"net/netip"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/scenarios/kit"
)

// splitRun sends n connections from a lab host to the Service and checks,
// against the kernel, where every one of them went: the backends that
// answered, the packet counters of the Service's KUBE-SVC chain, and the
// node's conntrack entries. It returns the per-rule counter deltas of the
// KUBE-SVC chain and the per-backend counts in pod-name order.
type splitRun struct {
	lab      *kit.Lab
	node     string
	from     string
	vip      netip.Addr
	pods     map[string]netip.Addr // pod name → IP
	svcChain string
	outside  bool // from outside the cluster CIDR: masqueraded
}

func (s splitRun) run(n int) (ruleDeltas []int64, counts []float64) {
	GinkgoHelper()
	target := netip.AddrPortFrom(s.vip, 80)
	before := kit.Rules(must(s.lab.IPTablesSave(s.node, "nat", true)), s.svcChain)
	res, err := s.lab.Traffic(s.from, target.String(), n)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Succeeded).To(Equal(n), "every connection answers: %s", describeCounts(res))
	after := kit.Rules(must(s.lab.IPTablesSave(s.node, "nat", true)), s.svcChain)
	ruleDeltas, err = kit.Delta(before, after)
	Expect(err).NotTo(HaveOccurred())

	names := make([]string, 0, len(s.pods))
	for name := range s.pods {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		counts = append(counts, float64(res.Backends[name]))
	}
	Expect(res.Backends).To(HaveLen(len(s.pods)), "only the Service's pods answer: %v", res.Backends)

	// Counters: the nat table sees the first packet of each connection, so
	// each connection adds exactly 1 to the rules it traversed.
	var toEndpoints int64
	for i, r := range after {
		switch target := jumpTarget(r.Spec); target {
		case "KUBE-MARK-MASQ":
			want := int64(0)
			if s.outside {
				want = int64(n)
			}
			Expect(ruleDeltas[i]).To(Equal(want), "masquerade rule %q counts the connections from outside the cluster CIDR", r.Spec)
		default:
			toEndpoints += ruleDeltas[i]
			backend := ""
			for name, ip := range s.pods {
				if sepChainFor("default/web", ip, 8080) == target {
					backend = name
				}
			}
			Expect(backend).NotTo(BeEmpty(), "rule %q jumps to the KUBE-SEP chain of one of the pods", r.Spec)
			Expect(ruleDeltas[i]).To(Equal(int64(res.Backends[backend])),
				"the counter of %q equals the connections %s answered", r.Spec, backend)
		}
	}
	Expect(toEndpoints).To(Equal(int64(n)), "the KUBE-SVC rules account for every connection")

	// Conntrack: one entry per connection, original destination the VIP,
	// reply source the pod that answered, reply destination the client —
	// or the node's pod gateway when masqueraded.
	flows, err := s.lab.Conntrack(s.node)
	Expect(err).NotTo(HaveOccurred())
	sources := localAddrs(res)
	mine := flowsTo(flows, target, sources)
	Expect(mine).To(HaveLen(n), "one conntrack entry per connection")
	backendOf := map[netip.AddrPort]string{}
	for _, c := range res.Connections {
		backendOf[netip.MustParseAddrPort(c.LocalAddress)] = c.Backend
	}
	gateway := s.lab.Topology.Spec.Nodes[0].PodCIDR.Addr().Next()
	for _, f := range mine {
		Expect(f.Reply.Src).To(Equal(netip.AddrPortFrom(s.pods[backendOf[f.Orig.Src]], 8080)),
			"conntrack %v: the reply comes from the pod that answered (%s)", f, backendOf[f.Orig.Src])
		Expect(f.DstNAT()).To(BeTrue(), "conntrack %v: DNAT status bit", f)
		if s.outside {
			Expect(f.Reply.Dst.Addr()).To(Equal(gateway), "conntrack %v: masqueraded to the node's address on cni0", f)
			Expect(f.SrcNAT()).To(BeTrue(), "conntrack %v: SNAT status bit", f)
		} else {
			Expect(f.Reply.Dst).To(Equal(f.Orig.Src), "conntrack %v: pod-to-Service traffic is not masqueraded", f)
			Expect(f.SrcNAT()).To(BeFalse(), "conntrack %v: no SNAT status bit", f)
		}
	}
	return ruleDeltas, counts
}

// webLab is a single-node lab running webService(replicas), made for one
// Ordered container and deleted after it, also when a spec fails.
type webLab struct {
	*kit.Lab
	vip  netip.Addr
	pods map[string]netip.Addr // pod name → IP
}

func newWebLab(prefix string, replicas int) *webLab {
	w := &webLab{}
	BeforeAll(func(ctx SpecContext) {
		lab, err := kit.NewLab(ctx, kit.UniqueName(prefix), singleNode, binary)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(lab.Delete()).To(Succeed()) })
		Expect(lab.Apply(ctx, webService(replicas))).To(Succeed())
		w.Lab, w.vip, w.pods = lab, serviceVIP(lab, "web"), podIPs(lab, "web")
		Expect(w.pods).To(HaveLen(replicas))
	})
	return w
}

func must(s string, err error) string {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	return s
}

var _ = Describe("two-pod 50/50 split", Ordered, Label("iptables", "distribution"), func() {
	const node = "node1"
	svcChain := kit.UpstreamChain("KUBE-SVC-", "default/web", "tcp")
	w := newWebLab("split", 2)

	It("sends the cluster IP to the KUBE-SVC chain named by upstream's hash", func() {
		lines := kit.Lines(must(w.IPTablesSave(node, "nat", false)))
		Expect(lines).To(ContainElement(fmt.Sprintf(
			`-A KUBE-SERVICES -d %s/32 -p tcp -m comment --comment "default/web cluster IP" -m tcp --dport 80 -j %s`, w.vip, svcChain)))
	})

	It("spreads with one --probability 0.5 rule and a catch-all, each KUBE-SEP DNATting to its pod", func() {
		save := must(w.IPTablesSave(node, "nat", false))
		rules := kit.Rules(save, svcChain)
		Expect(rules).To(HaveLen(3), "masquerade rule, 0.5 rule, catch-all: %v", rules)
		Expect(rules[0].Spec).To(Equal(fmt.Sprintf(
			`! -s 10.244.0.0/16 -d %s/32 -p tcp -m comment --comment "default/web cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`, w.vip)))
		Expect(rules[1].Spec).To(MatchRegexp(`-m statistic --mode random --probability 0\.50000000000 -j KUBE-SEP-`))
		Expect(rules[2].Spec).NotTo(ContainSubstring("statistic"))
		for name, ip := range w.pods {
			sep := sepChainFor("default/web", ip, 8080)
			Expect([]string{jumpTarget(rules[1].Spec), jumpTarget(rules[2].Spec)}).To(ContainElement(sep), "pod %s has its KUBE-SEP chain", name)
			Expect(kit.Rules(save, sep)).To(ConsistOf(
				kit.Rule{Chain: sep, Spec: fmt.Sprintf(`-s %s/32 -m comment --comment "default/web" -j KUBE-MARK-MASQ`, ip)},
				kit.Rule{Chain: sep, Spec: fmt.Sprintf(`-p tcp -m comment --comment "default/web" -m tcp -j DNAT --to-destination %s:8080`, ip)},
			))
		}
	})

	It("splits connections from an outside client 50/50, each one counted and tracked", func() {
		n := sampleSize(0.6, 0.4)
		By(fmt.Sprintf("%d connections: chi-square at alpha %g, and a 60/40 skew is caught with probability ≥ 1 − %g", n, alpha, miss))
		run := splitRun{lab: w.Lab, node: node, from: "client", vip: w.vip, pods: w.pods, svcChain: svcChain, outside: true}
		_, counts := run.run(n)
		expectUniform("client → web", counts)
	})

	It("splits connections from a third pod 50/50, not masqueraded", func() {
		n := sampleSize(0.6, 0.4)
		By(fmt.Sprintf("%d connections from pod probe", n))
		run := splitRun{lab: w.Lab, node: node, from: "probe", vip: w.vip, pods: w.pods, svcChain: svcChain}
		_, counts := run.run(n)
		expectUniform("probe → web", counts)
	})
})

var _ = Describe("three-pod ladder", Ordered, Label("iptables", "distribution"), func() {
	const node = "node1"
	svcChain := kit.UpstreamChain("KUBE-SVC-", "default/web", "tcp")
	w := newWebLab("ladder", 3)

	It("writes the 1/3, 1/2, catch-all ladder as iptables prints it", func() {
		rules := kit.Rules(must(w.IPTablesSave(node, "nat", false)), svcChain)
		Expect(rules).To(HaveLen(4))
		Expect(rules[1].Spec).To(MatchRegexp(`-m statistic --mode random --probability 0\.33333333349 -j KUBE-SEP-`))
		Expect(rules[2].Spec).To(MatchRegexp(`-m statistic --mode random --probability 0\.50000000000 -j KUBE-SEP-`))
		Expect(rules[3].Spec).NotTo(ContainSubstring("statistic"))
	})

	It("takes 1/3 at the first rule, half the rest at the second, and spreads evenly", func() {
		n := sampleSize(0.4, 0.3, 0.3)
		By(fmt.Sprintf("%d connections: each chi-square at alpha %g; a 40/30/30 skew is caught with probability ≥ 1 − %g", n, alpha, miss))
		run := splitRun{lab: w.Lab, node: node, from: "client", vip: w.vip, pods: w.pods, svcChain: svcChain, outside: true}
		deltas, counts := run.run(n)
		first, second, last := float64(deltas[1]), float64(deltas[2]), float64(deltas[3])
		expectShares("first rule (probability 1/3) of all connections", []float64{first, second + last}, []float64{1.0 / 3, 2.0 / 3})
		expectShares("second rule (probability 1/2) of the rest", []float64{second, last}, []float64{0.5, 0.5})
		expectUniform("client → web over 3 pods", counts)
	})
})
