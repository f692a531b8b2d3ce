package conformance

import (
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/scenarios/kit"
)

// The labels that say what a spec needs of the target. A spec (or its
// container) that carries one runs only where SkipReason finds it met;
// the same function decides at run time and for --dry-run.
const (
	// LabelDisruptive is upstream's label for specs that restart
	// components: they run only with Options.Disruptive (--disruptive).
	LabelDisruptive = "Disruptive"
	// LabelModeSwitch marks the proxy-mode switch: it needs a proxy that
	// writes kube-proxy's rules and keeps its configuration in a
	// ConfigMap (the one it edits).
	LabelModeSwitch = "mode-switch"
	// LabelKubeProxyInternals marks specs that assert kube-proxy's
	// internals (rules, chain names, the nft table, /proxyMode): they
	// skip where the Service proxy is not kube-proxy or svclab's.
	LabelKubeProxyInternals = "kube-proxy-internals"
	// LabelCrossNode marks specs that need two nodes.
	LabelCrossNode = "cross-node"
)

// DisruptiveReason is why a Disruptive spec skips without --disruptive.
const DisruptiveReason = "Disruptive: rewrites the proxy's ConfigMap and restarts its pods; run with --disruptive"

// Facts are what SkipReason decides on.
type Facts struct {
	// Proxy is what proxies Services on the target.
	Proxy kit.Proxy
	// Disruptive is Options.Disruptive.
	Disruptive bool
	// Nodes is how many nodes the scenarios may use; 0 is unknown (the
	// target then says so when a workspace is made: kit.ErrTooFewNodes).
	Nodes int
}

// SkipReason is why a spec with the given labels (its containers' and its
// own) does not run on a target with facts f; "" when it runs.
func SkipReason(labels []string, f Facts) string {
	has := func(label string) bool { return slices.Contains(labels, label) }
	switch {
	case has(LabelDisruptive) && !f.Disruptive:
		return DisruptiveReason
	case (has(LabelKubeProxyInternals) || has(LabelModeSwitch)) && f.Proxy.NotKubeProxyReason() != "":
		return f.Proxy.NotKubeProxyReason()
	case has(LabelModeSwitch) && f.Proxy.ConfigMap == "":
		return fmt.Sprintf("the proxy keeps its configuration in no ConfigMap (%s): the mode switch has none to edit", f.Proxy.ConfigFrom)
	case has(LabelCrossNode) && f.Nodes > 0 && f.Nodes < 2:
		return fmt.Sprintf("cross-node: needs 2 nodes the scenarios can use, the cluster has %d", f.Nodes)
	}
	return ""
}

// needsProxy says whether deciding on labels needs the proxy's facts.
func needsProxy(labels []string) bool {
	return slices.Contains(labels, LabelKubeProxyInternals) || slices.Contains(labels, LabelModeSwitch)
}

// skipUnmet skips the running spec (or, in a BeforeAll, its Ordered
// container) when the target does not meet what labels call for.
func (s *suite) skipUnmet(ctx SpecContext, labels []string) {
	GinkgoHelper()
	f := Facts{Disruptive: s.opts.Disruptive}
	if needsProxy(labels) && (!slices.Contains(labels, LabelDisruptive) || f.Disruptive) {
		f.Proxy = s.proxy(ctx)
	}
	if reason := SkipReason(labels, f); reason != "" {
		Skip(reason)
	}
}

// proxy is what proxies Services on the target (found once per run).
func (s *suite) proxy(ctx SpecContext) kit.Proxy {
	GinkgoHelper()
	p, err := s.target.Proxy(ctx)
	Expect(err).NotTo(HaveOccurred(), "finding what proxies Services on the target")
	return p
}

// containerLabels are the labels of the running spec's containers.
func containerLabels() []string {
	var out []string
	for _, labels := range CurrentSpecReport().ContainerHierarchyLabels {
		out = append(out, labels...)
	}
	return out
}
