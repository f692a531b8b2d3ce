package conformance

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/scenarios/kit"
)

// ladder are the --probability values of n endpoints as iptables-save
// prints them, the last endpoint a catch-all: upstream's iptables proxier
// writes 1/(n−i) as %0.10f, the kernel's statistic match keeps it as a
// 31-bit fraction (lround(2^31 × p)), and iptables-save prints that
// fraction with %.11f (1/3 → 0.3333333333 → 0.33333333349).
func ladder(n int) []string {
	var out []string
	for i := 0; i < n-1; i++ {
		written, _ := strconv.ParseFloat(fmt.Sprintf("%0.10f", 1.0/float64(n-i)), 64)
		out = append(out, fmt.Sprintf("%.11f", math.Round(written*0x80000000)/0x80000000))
	}
	return out
}

// expectIPTablesService checks, on a node, the iptables rules of the
// ClusterIP Service ns/name (port 80, one TCP port) over pods: the
// KUBE-SERVICES jump to the KUBE-SVC chain named by upstream's hash, the
// masquerade rule the configuration calls for (masq), the probability
// ladder, and one KUBE-SEP chain per pod DNATting to it.
func expectIPTablesService(ctx context.Context, ws kit.Workspace, node string, svc *corev1.Service, pods []corev1.Pod, targetPort int, masq masquerade) {
	GinkgoHelper()
	portName := svc.Namespace + "/" + svc.Name
	svcChain := kit.UpstreamChain("KUBE-SVC-", portName, "tcp")
	save, err := ws.IPTablesSave(ctx, node, "nat", false)
	Expect(err).NotTo(HaveOccurred())
	Expect(kit.Lines(save)).To(ContainElement(fmt.Sprintf(
		`-A KUBE-SERVICES -d %s/%d -p tcp -m comment --comment "%s cluster IP" -m tcp --dport 80 -j %s`, svc.Spec.ClusterIP, hostLen(svc.Spec.ClusterIP), portName, svcChain)),
		"the cluster IP jumps to the KUBE-SVC chain named by upstream's hash")
	rules := expectIPTablesMasquerade(kit.Rules(save, svcChain), netip.MustParseAddr(svc.Spec.ClusterIP), portName, masq)
	Expect(rules).To(HaveLen(len(pods)), "one rule per endpoint after the masquerade rule: %v", rules)
	for i, p := range ladder(len(pods)) {
		Expect(rules[i].Spec).To(ContainSubstring("-m statistic --mode random --probability "+p+" -j KUBE-SEP-"), "rule %d of the ladder", i+1)
	}
	Expect(rules[len(pods)-1].Spec).NotTo(ContainSubstring("statistic"), "the last endpoint is a catch-all")
	var seps []string
	for _, r := range rules {
		seps = append(seps, jumpTarget(r.Spec))
	}
	for _, pod := range pods {
		ip := netip.MustParseAddr(pod.Status.PodIP)
		sep := sepChain(portName, ip, targetPort)
		Expect(seps).To(ContainElement(sep), "pod %s has its KUBE-SEP chain", pod.Name)
		Expect(kit.Rules(save, sep)).To(ConsistOf(
			kit.Rule{Chain: sep, Spec: fmt.Sprintf(`-s %s/%d -m comment --comment "%s" -j KUBE-MARK-MASQ`, ip, kit.HostPrefixLen(kit.FamilyOf(ip)), portName)},
			kit.Rule{Chain: sep, Spec: fmt.Sprintf(`-p tcp -m comment --comment "%s" -m tcp -j DNAT --to-destination %s`, portName, netip.AddrPortFrom(ip, uint16(targetPort)))},
		), "pod %s's KUBE-SEP chain: hairpin masquerade and DNAT", pod.Name)
	}
}

// expectIPTablesMasquerade checks the KUBE-SVC chain's first rule against
// the masquerade rule masq calls for, and returns the rules after it (all
// of them when masq calls for none, and then none may mark for
// masquerade).
func expectIPTablesMasquerade(rules []kit.Rule, ip netip.Addr, portName string, masq masquerade) []kit.Rule {
	GinkgoHelper()
	Expect(iptablesMasqueradeProblem(rules, ip, portName, masq)).To(BeEmpty())
	if masq.Rule {
		return rules[1:]
	}
	return rules
}

// iptablesMasqueradeProblem says how a KUBE-SVC chain's rules differ from
// the masquerade rule masq calls for ("" if they do not).
func iptablesMasqueradeProblem(rules []kit.Rule, ip netip.Addr, portName string, masq masquerade) string {
	want := masq.iptablesRule(ip, 80, portName)
	var marking []string
	for _, r := range rules {
		if strings.HasSuffix(r.Spec, "-j KUBE-MARK-MASQ") {
			marking = append(marking, r.Spec)
		}
	}
	switch {
	case want == "" && len(marking) > 0:
		return fmt.Sprintf("%s, yet the KUBE-SVC chain marks for masquerade: %q", masq.Why, marking)
	case want == "":
		return ""
	case len(rules) == 0 || rules[0].Spec != want:
		return fmt.Sprintf("%s, so the KUBE-SVC chain's first rule should be\n  %s\nits rules marking for masquerade: %q", masq.Why, want, marking)
	case len(marking) > 1:
		return fmt.Sprintf("%s; the KUBE-SVC chain has more than one rule marking for masquerade: %q", masq.Why, marking)
	}
	return ""
}

// expectNFTablesService checks, on a node, kube-proxy's nftables rules of
// the Service: a service chain that picks one of the pods with equal
// weight by numgen — since Kubernetes 1.36 one `dnat ip to numgen random
// mod N map { 0 : IP . PORT, … }`, before that a `numgen random mod N
// vmap` of endpoint chains, each DNATting to its pod — and the masquerade
// rule the configuration calls for (masq).
func expectNFTablesService(ctx context.Context, ws kit.Workspace, node string, svc *corev1.Service, pods []corev1.Pod, targetPort int, masq masquerade) {
	GinkgoHelper()
	table, err := ws.NFTables(ctx, node)
	Expect(err).NotTo(HaveOccurred())
	Expect(nftServiceProblem(table, svc, pods, targetPort)).To(BeEmpty())
	Expect(nftMasqueradeProblem(table, svc, masq)).To(BeEmpty())
}

// nftMasqueradeProblem says how the table's masquerade rules for the
// Service's cluster IP differ from what masq calls for ("" if they do
// not). A rule marks the cluster IP for masquerade either in the services
// chain, for every cluster IP (`ip daddr @cluster-ips [not-local] meta
// mark set meta mark or 0x4000`, kube-proxy 1.36), or in the Service's
// chain (`ip daddr IP tcp dport PORT [not-local] jump
// mark-for-masquerade`, before); its matches other than the destination
// must be exactly masq's not-local match.
func nftMasqueradeProblem(table string, svc *corev1.Service, masq masquerade) string {
	nft, err := parseNFT(table)
	if err != nil {
		return fmt.Sprintf("table ip kube-proxy on the node: %v", err)
	}
	var marking []*nftRule
	for _, r := range nft.rules("services") {
		if r.marksForMasquerade() && slices.Contains(r.matches(), nftProto(svc.Spec.ClusterIP)+" daddr == @cluster-ips") {
			marking = append(marking, r)
		}
	}
	for _, r := range nft.rules(nftServiceChain(nft, svc)) {
		if r.marksForMasquerade() && slices.Contains(r.matches(), nftProto(svc.Spec.ClusterIP)+" daddr == "+svc.Spec.ClusterIP) {
			marking = append(marking, r)
		}
	}
	if !masq.Rule {
		if len(marking) > 0 {
			return fmt.Sprintf("%s, yet rules mark it for masquerade:\n%s", masq.Why, nftRulesText(marking))
		}
		return ""
	}
	for _, r := range marking {
		if nftNotLocal(r) == masq.nftMatch() {
			return ""
		}
	}
	want := masq.nftMatch()
	if want == "" {
		want = "no match but the destination"
	}
	return fmt.Sprintf("%s: want a rule marking cluster IP %s for masquerade with %s; the rules that mark it:\n%s", masq.Why, svc.Spec.ClusterIP, want, nftRulesText(marking))
}

// nftNotLocal is a masquerade rule's matches other than on the
// destination (address, protocol, port), as nft lists them.
func nftNotLocal(r *nftRule) string {
	var out []string
	for _, m := range r.matches() {
		if !strings.HasPrefix(m, "ip daddr ") && !strings.HasPrefix(m, "ip6 daddr ") && !strings.HasPrefix(m, "tcp dport ") && !strings.HasPrefix(m, "th dport ") && !strings.HasPrefix(m, "meta l4proto ") {
			out = append(out, m)
		}
	}
	return strings.Join(out, " ")
}

// nftServiceChain is the name of the Service's (first TCP port's) chain,
// service-<hash>-<ns>/<name>/tcp/ ("" when the table has none).
func nftServiceChain(nft *nftOutput, svc *corev1.Service) string {
	chainName := regexp.MustCompile(`^service-\w+-` + regexp.QuoteMeta(svc.Namespace+"/"+svc.Name+"/tcp/") + `$`)
	for _, c := range nft.chains() {
		if chainName.MatchString(c) {
			return c
		}
	}
	return ""
}

// nftServiceProblem says what is missing for the Service from table, the
// output of `nft -j list table ip kube-proxy` ("" if nothing): the
// service chain service-<hash>-<ns>/<name>/tcp/ must have a rule that
// spreads by `numgen random mod <number of pods>`, and every pod must be
// one of its choices — an address . port of the DNAT map, or a chain of
// the verdict map that DNATs to the pod.
func nftServiceProblem(table string, svc *corev1.Service, pods []corev1.Pod, targetPort int) string {
	nft, err := parseNFT(table)
	if err != nil {
		return fmt.Sprintf("table ip kube-proxy on the node: %v", err)
	}
	portName := svc.Namespace + "/" + svc.Name + "/tcp/"
	chain := nftServiceChain(nft, svc)
	if chain == "" {
		return fmt.Sprintf("no service chain for %s in table ip kube-proxy on the node (chains: %s)", portName, strings.Join(nft.chains(), ", "))
	}
	rules := nft.rules(chain)
	var spread *nftMap
	for _, r := range rules {
		if spread = r.numgenSpread(len(pods)); spread != nil {
			break
		}
	}
	if spread == nil {
		return fmt.Sprintf("chain %s does not spread with numgen random mod %d over the endpoints; its rules:\n%s", chain, len(pods), nftRulesText(rules))
	}
	choices := map[netip.AddrPort]bool{} // where the map's elements DNAT to
	for _, e := range spread.Data.Elements {
		if e.To.IsValid() {
			choices[e.To] = true
		}
		if e.Chain != "" {
			for _, r := range nft.rules(e.Chain) {
				for _, to := range r.dnatTo() {
					choices[to] = true
				}
			}
		}
	}
	for _, pod := range pods {
		to := netip.AddrPortFrom(netip.MustParseAddr(pod.Status.PodIP), uint16(targetPort))
		if !choices[to] {
			var have []string
			for c := range choices {
				have = append(have, c.String())
			}
			sort.Strings(have)
			if len(have) == 0 {
				have = []string{"no address"}
			}
			return fmt.Sprintf("chain %s does not DNAT to pod %s (%s): its numgen map leads to %s", chain, pod.Name, to, strings.Join(have, ", "))
		}
	}
	return ""
}

// nftRulesText lists rules one a line, for messages.
func nftRulesText(rules []*nftRule) string {
	var b strings.Builder
	for _, r := range rules {
		b.WriteString("  " + r.String() + "\n")
	}
	return b.String()
}

// expectProgrammed checks the Service's rules on a node in whatever mode
// the node's proxy runs, the masquerade rule as masq calls for.
func expectProgrammed(ctx context.Context, ws kit.Workspace, node string, svc *corev1.Service, pods []corev1.Pod, targetPort int, masq masquerade) {
	GinkgoHelper()
	mode, err := ws.ProxyMode(ctx, node)
	Expect(err).NotTo(HaveOccurred())
	By(fmt.Sprintf("node %s: the proxy runs in %s mode; %s", node, mode, masq.Why))
	switch mode {
	case "iptables":
		expectIPTablesService(ctx, ws, node, svc, pods, targetPort, masq)
	case "nftables":
		expectNFTablesService(ctx, ws, node, svc, pods, targetPort, masq)
	default:
		Skip(fmt.Sprintf("the rules of %s mode are checked by the IPVS scenarios, not here", mode))
	}
}

// sepChain is the KUBE-SEP chain of an endpoint, by upstream's hash.
func sepChain(servicePortName string, ip netip.Addr, port int) string {
	return kit.UpstreamChain("KUBE-SEP-", servicePortName, "tcp", netip.AddrPortFrom(ip, uint16(port)).String())
}

// jumpTarget is the -j target of a rule spec.
func jumpTarget(spec string) string {
	i := strings.LastIndex(spec, "-j ")
	Expect(i).To(BeNumerically(">=", 0), "rule %q has no jump", spec)
	return strings.Fields(spec[i+3:])[0]
}

// podNames are the pods' names, sorted.
func podNames(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// hostLen is the prefix length iptables-save writes after one address
// of ip's family: 32, or 128 for IPv6.
func hostLen(ip string) int {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return 32
	}
	return kit.HostPrefixLen(kit.FamilyOf(a))
}

// nftProto is the nftables payload protocol of ip's family: ip, or ip6.
func nftProto(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "ip"
	}
	return kit.NFTFamily(kit.FamilyOf(a))
}
