package conformance

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"regexp"
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
// masquerade rule for traffic from outside the pod network, the
// probability ladder, and one KUBE-SEP chain per pod DNATting to it.
func expectIPTablesService(ctx context.Context, ws kit.Workspace, node string, svc *corev1.Service, pods []corev1.Pod, targetPort int) {
	GinkgoHelper()
	portName := svc.Namespace + "/" + svc.Name
	svcChain := kit.UpstreamChain("KUBE-SVC-", portName, "tcp")
	save, err := ws.IPTablesSave(ctx, node, "nat", false)
	Expect(err).NotTo(HaveOccurred())
	Expect(kit.Lines(save)).To(ContainElement(fmt.Sprintf(
		`-A KUBE-SERVICES -d %s/32 -p tcp -m comment --comment "%s cluster IP" -m tcp --dport 80 -j %s`, svc.Spec.ClusterIP, portName, svcChain)),
		"the cluster IP jumps to the KUBE-SVC chain named by upstream's hash")
	rules := kit.Rules(save, svcChain)
	Expect(rules).To(HaveLen(len(pods)+1), "a masquerade rule and one rule per endpoint: %v", rules)
	Expect(rules[0].Spec).To(MatchRegexp(`^! -s \S+ -d %s/32 -p tcp -m comment --comment "%s cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ$`,
		regexp.QuoteMeta(svc.Spec.ClusterIP), regexp.QuoteMeta(portName)), "traffic from outside the pod network is marked for masquerade")
	for i, p := range ladder(len(pods)) {
		Expect(rules[i+1].Spec).To(ContainSubstring("-m statistic --mode random --probability "+p+" -j KUBE-SEP-"), "rule %d of the ladder", i+1)
	}
	Expect(rules[len(pods)].Spec).NotTo(ContainSubstring("statistic"), "the last endpoint is a catch-all")
	var seps []string
	for _, r := range rules[1:] {
		seps = append(seps, jumpTarget(r.Spec))
	}
	for _, pod := range pods {
		ip := netip.MustParseAddr(pod.Status.PodIP)
		sep := sepChain(portName, ip, targetPort)
		Expect(seps).To(ContainElement(sep), "pod %s has its KUBE-SEP chain", pod.Name)
		Expect(kit.Rules(save, sep)).To(ConsistOf(
			kit.Rule{Chain: sep, Spec: fmt.Sprintf(`-s %s/32 -m comment --comment "%s" -j KUBE-MARK-MASQ`, ip, portName)},
			kit.Rule{Chain: sep, Spec: fmt.Sprintf(`-p tcp -m comment --comment "%s" -m tcp -j DNAT --to-destination %s`, portName, netip.AddrPortFrom(ip, uint16(targetPort)))},
		), "pod %s's KUBE-SEP chain: hairpin masquerade and DNAT", pod.Name)
	}
}

// expectNFTablesService checks, on a node, kube-proxy's nftables rules of
// the Service: a service chain that picks one of the pods with equal
// weight by numgen — since Kubernetes 1.36 one `dnat ip to numgen random
// mod N map { 0 : IP . PORT, … }`, before that a `numgen random mod N
// vmap` of endpoint chains, each DNATting to its pod.
func expectNFTablesService(ctx context.Context, ws kit.Workspace, node string, svc *corev1.Service, pods []corev1.Pod, targetPort int) {
	GinkgoHelper()
	table, err := ws.NFTables(ctx, node)
	Expect(err).NotTo(HaveOccurred())
	Expect(nftServiceProblem(table, svc, pods, targetPort)).To(BeEmpty())
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
	chainName := regexp.MustCompile(`^service-\w+-` + regexp.QuoteMeta(portName) + `$`)
	var chain string
	for _, c := range nft.chains() {
		if chainName.MatchString(c) {
			chain = c
			break
		}
	}
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
// the node's proxy runs.
func expectProgrammed(ctx context.Context, ws kit.Workspace, node string, svc *corev1.Service, pods []corev1.Pod, targetPort int) {
	GinkgoHelper()
	mode, err := ws.ProxyMode(ctx, node)
	Expect(err).NotTo(HaveOccurred())
	By(fmt.Sprintf("node %s: the proxy runs in %s mode", node, mode))
	switch mode {
	case "iptables":
		expectIPTablesService(ctx, ws, node, svc, pods, targetPort)
	case "nftables":
		expectNFTablesService(ctx, ws, node, svc, pods, targetPort)
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
