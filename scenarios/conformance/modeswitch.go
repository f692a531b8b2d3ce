package conformance

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/scenarios/kit"
)

// Seed 001's mode switch, on any cluster: edit `mode` in
// kube-system/kube-proxy's config.conf, delete the pods labelled
// k8s-app=kube-proxy, wait for the DaemonSet's new pods, then check
// /proxyMode on every node and the Service's rules in the new mode — and
// switch back the same way. With the stock kube-proxy the pair is
// iptables ↔ nftables; ipvs where the nodes' kernel has IP_VS.
func (s *suite) modeSwitchSpecs() {
	Describe("switching the proxy mode through the kube-proxy ConfigMap", Ordered, Label("mode-switch"), func() {
		w := s.newWeb("modeswitch", 2)
		var from, to string

		BeforeAll(func(ctx SpecContext) {
			var err error
			from, err = (*w.ws).ProxyMode(ctx, w.nodes[0].Name)
			Expect(err).NotTo(HaveOccurred())
			modes, err := (*w.ws).ProxyModes(ctx)
			Expect(err).NotTo(HaveOccurred())
			to = otherMode(from, modes)
			if to == "" {
				Skip(fmt.Sprintf("the proxy runs in %s mode and can run no other here (modes %v)", from, modes))
			}
			DeferCleanup(func(ctx SpecContext) {
				// Leave the cluster in the mode it had, also after a failure.
				Expect((*w.ws).SwitchProxyMode(ctx, from)).To(Succeed())
			})
		})

		check := func(ctx context.Context, mode string) {
			GinkgoHelper()
			for _, n := range w.nodes {
				Expect((*w.ws).ProxyMode(ctx, n.Name)).To(Equal(mode), "/proxyMode on %s", n.Name)
			}
			Eventually(func(g Gomega) {
				expectProgrammedIn(g, ctx, mode, w)
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
			const n = 100
			res, err := (*w.ws).Traffic(ctx, w.fromProbe(), w.vip(), n)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Succeeded).To(Equal(n), "every connection answers in %s mode: %s", mode, kit.DescribeTraffic(res))
			Expect(res.Backends).To(HaveLen(len(w.pods)), "both pods answer in %s mode: %v", mode, res.Backends)
		}

		It("switches to the other mode when the ConfigMap says so and the proxy pods are deleted", func(ctx SpecContext) {
			By(fmt.Sprintf("%s → %s", from, to))
			Expect((*w.ws).SwitchProxyMode(ctx, to)).To(Succeed())
			check(ctx, to)
		})

		It("switches back the same way", func(ctx SpecContext) {
			By(fmt.Sprintf("%s → %s", to, from))
			Expect((*w.ws).SwitchProxyMode(ctx, from)).To(Succeed())
			check(ctx, from)
		})
	})
}

// otherMode is the mode to switch to from `from`: nftables ↔ iptables
// first, else ipvs, else "".
func otherMode(from string, modes []string) string {
	for _, m := range []string{"nftables", "iptables", "ipvs"} {
		if m != from && slices.Contains(modes, m) {
			return m
		}
	}
	return ""
}

// expectProgrammedIn is expectProgrammed in a given mode, for Eventually
// (the new proxy's first sync may still be under way).
func expectProgrammedIn(g Gomega, ctx context.Context, mode string, w *web) {
	ws := *w.ws
	node := w.fromProbe().Node
	switch mode {
	case "iptables":
		save, err := ws.IPTablesSave(ctx, node, "nat", false)
		g.Expect(err).NotTo(HaveOccurred())
		chain := kit.UpstreamChain("KUBE-SVC-", w.svc.Namespace+"/"+w.svc.Name, "tcp")
		g.Expect(kit.Rules(save, chain)).To(HaveLen(len(w.pods)+1), "%s on %s", chain, node)
	case "nftables":
		table, err := ws.NFTables(ctx, node)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nftServiceProblem(table, w.svc, w.pods, 8080)).To(BeEmpty(), "table ip kube-proxy on %s", node)
	}
}
