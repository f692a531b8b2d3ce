package conformance

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/scenarios/kit"
)

// Seed 001's mode switch, on any cluster: edit `mode` in the config.conf
// of the proxy's ConfigMap (the one found, kit.Proxy.ConfigMap: kubeadm's
// kube-system/kube-proxy, or another), restart the proxy's pods, wait
// for the DaemonSet's new pods, then check /proxyMode on every node and
// the Service's rules in the new mode — and switch back the same way.
// With the stock kube-proxy the pair is iptables ↔ nftables; ipvs where
// the nodes' kernel has IP_VS.
//
// It is Disruptive (upstream's label for specs that restart components):
// it runs only with Options.Disruptive, and only where the proxy writes
// kube-proxy's rules and keeps its configuration in a ConfigMap
// (SkipReason says why not).
func (s *suite) modeSwitchSpecs(f familyRun) {
	Describe(f.text("switching the proxy mode through the proxy's ConfigMap"), Ordered, f.labels(), Label(LabelDisruptive, LabelModeSwitch), func() {
		w := s.newWeb(f, "modeswitch", 2)
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
			By(fmt.Sprintf("the proxy's ConfigMap %s (%s)", w.proxy.ConfigMap, w.proxy.ConfigFrom))
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
// (the new proxy's first sync may still be under way): the KUBE-SVC chain
// has its masquerade rule (as the configuration calls for) and one rule
// per pod, or the nft table's service chain spreads over the pods and the
// masquerade rule is there.
func expectProgrammedIn(g Gomega, ctx context.Context, mode string, w *web) {
	ws := *w.ws
	node := w.fromProbe().Node
	masq := w.masquerade(node)
	switch mode {
	case "iptables":
		save, err := ws.IPTablesSave(ctx, node, "nat", false)
		g.Expect(err).NotTo(HaveOccurred())
		chain := kit.UpstreamChain("KUBE-SVC-", w.serviceKey(), "tcp")
		rules := kit.Rules(save, chain)
		g.Expect(iptablesMasqueradeProblem(rules, netip.MustParseAddr(w.svc.Spec.ClusterIP), w.serviceKey(), masq)).To(BeEmpty(), "%s on %s", chain, node)
		want := len(w.pods)
		if masq.Rule {
			want++
		}
		g.Expect(rules).To(HaveLen(want), "%s on %s: the masquerade rule (%s) and one rule per pod", chain, node, masq.Why)
	case "nftables":
		table, err := ws.NFTables(ctx, node)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nftServiceProblem(table, w.svc, w.pods, 8080)).To(BeEmpty(), "table ip kube-proxy on %s", node)
		g.Expect(nftMasqueradeProblem(table, w.svc, masq)).To(BeEmpty(), "table ip kube-proxy on %s", node)
	}
}
