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
	// proxy is what proxies Services on the target: what is checked of
	// the connections depends on it.
	proxy kit.Proxy
	// family is the IP family the workload runs in ("" single-stack IPv4).
	family corev1.IPFamily
}

// newWeb makes a workspace running webService(replicas) for one Ordered
// container.
func (s *suite) newWeb(f familyRun, prefix string, replicas int) *web {
	w := &web{family: f.family}
	w.ws = s.workspace(f, prefix, 1, func(context.Context, kit.Workspace) string { return s.webService(replicas) })
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
		w.proxy = s.proxy(ctx)
	})
	s.evidenceOnFailure(w.evidence) // evidence.go
	return w
}

// masquerade is what the proxy's configuration does to connections to
// the Service's cluster IP that enter at node.
func (w *web) masquerade(node string) masquerade {
	for _, n := range w.nodes {
		if n.Name == node {
			return expectedMasquerade(w.proxy.Config, n, w.family)
		}
	}
	return expectedMasquerade(w.proxy.Config, kit.Node{Name: node}, w.family)
}

// expectProgrammed checks the Service's rules on the node the probe pod
// runs on.
func (w *web) expectProgrammed(ctx context.Context) {
	GinkgoHelper()
	node := w.fromProbe().Node
	expectProgrammed(ctx, *w.ws, node, w.svc, w.pods, 8080, w.masquerade(node))
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
// pods — whatever proxies Services — and, where that is kube-proxy or
// svclab's, against the kernel of the node the connections enter at: one
// conntrack entry per connection (DNAT to the pod that answered;
// masqueraded exactly when the configuration says, masquerade.marks)
// and, in iptables mode, KUBE-SVC counters that account for every
// connection. It returns the per-pod counts (in pod-name order) and, in
// iptables mode, the counter deltas of the KUBE-SVC chain's rules to the
// pods' KUBE-SEP chains, in order.
func (w *web) split(ctx context.Context, from kit.Client, n int) (counts []float64, ladderDeltas []int64) {
	GinkgoHelper()
	internals := w.proxy.WritesKubeProxyRules()
	iptables := internals && w.proxyMode(ctx, from.Node) == "iptables"
	var before []kit.Rule
	if iptables {
		before = w.svcRules(ctx, from.Node)
	}
	res := w.connect(ctx, from, n)
	if iptables {
		ladderDeltas = w.expectRuleCounters(ctx, from, n, before, res)
	}
	if internals {
		w.expectTracked(ctx, w.tracking(ctx, from, n, res))
	} else {
		By("rule counters and conntrack entries not checked: " + w.proxy.NotKubeProxyReason())
	}
	return w.countsByPod(res), ladderDeltas
}

// splitSpecs: two pods behind a Service, connections split 50/50.
func (s *suite) splitSpecs(f familyRun) {
	Describe(f.text("two-pod 50/50 split"), Ordered, f.labels(), Label("distribution"), func() {
		w := s.newWeb(f, "split", 2)

		It("programs the Service: upstream's chains and a 0.5 ladder (iptables), or a numgen map (nftables)", Label(LabelKubeProxyInternals), func(ctx SpecContext) {
			w.expectProgrammed(ctx)
		})

		It("splits connections from a pod 50/50, each one counted and tracked", func(ctx SpecContext) {
			n := sampleSize(0.6, 0.4)
			By(fmt.Sprintf("%d connections from pod %s: chi-square at alpha %g; a 60/40 skew is caught with probability ≥ 1 − %g", n, w.probe.Name, alpha, miss))
			counts, _ := w.split(ctx, w.fromProbe(), n)
			expectUniform("probe → web", counts)
		})

		It("splits connections from outside the pod network 50/50", func(ctx SpecContext) {
			n := sampleSize(0.6, 0.4)
			By(fmt.Sprintf("%d connections from outside, entering at %s", n, w.fromOutside().Node))
			counts, _ := w.split(ctx, w.fromOutside(), n)
			expectUniform("outside → web", counts)
		})
	})
}

// ladderSpecs: three pods, the 1/3, 1/2, catch-all ladder.
func (s *suite) ladderSpecs(f familyRun) {
	Describe(f.text("three-pod ladder"), Ordered, f.labels(), Label("distribution"), func() {
		w := s.newWeb(f, "ladder", 3)

		It("programs the 1/3, 1/2, catch-all ladder (iptables), or a numgen map over 3 (nftables)", Label(LabelKubeProxyInternals), func(ctx SpecContext) {
			w.expectProgrammed(ctx)
		})

		It("takes 1/3 at the first rule, half the rest at the second, and spreads evenly", func(ctx SpecContext) {
			n := sampleSize(0.4, 0.3, 0.3)
			By(fmt.Sprintf("%d connections from pod %s: each chi-square at alpha %g; a 40/30/30 skew is caught with probability ≥ 1 − %g", n, w.probe.Name, alpha, miss))
			counts, deltas := w.split(ctx, w.fromProbe(), n)
			if deltas != nil {
				first, second, last := float64(deltas[0]), float64(deltas[1]), float64(deltas[2])
				expectShares("first rule (probability 1/3) of all connections", []float64{first, second + last}, []float64{1.0 / 3, 2.0 / 3})
				expectShares("second rule (probability 1/2) of the rest", []float64{second, last}, []float64{0.5, 0.5})
			}
			expectUniform("probe → web over 3 pods", counts)
		})
	})
}
