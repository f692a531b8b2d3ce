package upstream

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	iptablestest "k8s.io/kubernetes/pkg/util/iptables/testing"
)

// builtinChains are each table's built-in chains in iptables-save order.
var builtinChains = map[utiliptables.Table][]utiliptables.Chain{
	utiliptables.TableFilter: {"INPUT", "FORWARD", "OUTPUT"},
	utiliptables.TableNAT:    {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
}

// Save prints the compared tables (filter, then nat) of a fake in
// iptables-save layout, applying the Normalize steps to every rule.
//
// Normalizations, each for something that is not comparable between the
// two programs or their fakes:
//
//  1. Chain order: built-in chains first in iptables-save's order, then
//     the others sorted by name, as iptables-save (legacy) prints them.
//     The fakes keep chains in creation order, and the two proxies create
//     them in a different order (jump chains first vs. restore order).
//  2. Counters: every chain's [packets:bytes] is printed as [0:0].
//  3. nfacct: upstream adds "-m nfacct --nfacct-name NAME" to the INVALID
//     drop rule, and an extra counting rule per node port on 127.0.0.0/8,
//     only when the kernel's nfnetlink_acct answers; svclab exports no
//     nfacct metrics. The match is removed and the counting rules dropped.
//  4. Node-port address rules: upstream writes one "kubernetes service
//     nodeports" rule per matching node address in Go map order; the run of
//     those rules at the end of KUBE-SERVICES is sorted.
//  5. Service order in the dispatch chains (KUBE-SERVICES, KUBE-NODEPORTS,
//     KUBE-EXTERNAL-SERVICES, KUBE-PROXY-FIREWALL): upstream visits service
//     ports in Go map order, so it differs from run to run; the rules are
//     stably sorted by the service port named at the start of their comment,
//     keeping each service's own rules in order and rules of no service
//     (the node-ports tail call) last.
func Save(fake *iptablestest.FakeIPTables) (string, error) {
	var b strings.Builder
	for _, name := range comparedTables {
		t, err := fake.Dump.GetTable(name)
		if err != nil {
			return "", err
		}
		saveTable(&b, t)
	}
	return b.String(), nil
}

func saveTable(b *strings.Builder, t *iptablestest.Table) {
	byName := map[utiliptables.Chain]*iptablestest.Chain{}
	var user []utiliptables.Chain
	for i := range t.Chains {
		c := &t.Chains[i]
		byName[c.Name] = c
		if !slices.Contains(builtinChains[t.Name], c.Name) {
			user = append(user, c.Name)
		}
	}
	slices.Sort(user)
	var order []utiliptables.Chain
	for _, c := range builtinChains[t.Name] {
		if byName[c] != nil {
			order = append(order, c)
		}
	}
	order = append(order, user...)

	fmt.Fprintf(b, "*%s\n", t.Name)
	for _, c := range order {
		fmt.Fprintf(b, ":%s - [0:0]\n", c)
	}
	for _, c := range order {
		var rules []string
		for _, r := range byName[c].Rules {
			if line, keep := normalizeRule(r.Raw); keep {
				rules = append(rules, line)
			}
		}
		if dispatchChains[c] {
			sortByServicePort(rules)
		}
		if c == "KUBE-SERVICES" && t.Name == utiliptables.TableNAT {
			sortNodePortAddressRules(rules)
		}
		for _, r := range rules {
			b.WriteString(r + "\n")
		}
	}
	b.WriteString("COMMIT\n")
}

var nfacctMatch = regexp.MustCompile(` -m nfacct --nfacct-name \S+`)

// normalizeRule applies normalization 3 to one rule.
func normalizeRule(raw string) (string, bool) {
	if strings.Contains(raw, "--nfacct-name localhost_nps_accepted_pkts") {
		return "", false
	}
	return nfacctMatch.ReplaceAllString(raw, ""), true
}

// dispatchChains hold rules of every service, in upstream's map order.
var dispatchChains = map[utiliptables.Chain]bool{
	"KUBE-SERVICES": true, "KUBE-NODEPORTS": true, "KUBE-EXTERNAL-SERVICES": true, "KUBE-PROXY-FIREWALL": true,
}

// servicePortComment captures "ns/name" or "ns/name:port" at the start of
// a rule's comment.
var servicePortComment = regexp.MustCompile(`--comment "?([^"/ ]+/[^" ]+)`)

// sortByServicePort applies normalization 5.
func sortByServicePort(rules []string) {
	key := func(rule string) string {
		if m := servicePortComment.FindStringSubmatch(rule); m != nil {
			return m[1]
		}
		return "\xff"
	}
	slices.SortStableFunc(rules, func(a, b string) int { return strings.Compare(key(a), key(b)) })
}

const nodePortsComment = `"kubernetes service nodeports; NOTE: this must be the last rule in this chain"`

// sortNodePortAddressRules applies normalization 4.
func sortNodePortAddressRules(rules []string) {
	start := len(rules)
	for start > 0 && strings.Contains(rules[start-1], nodePortsComment) {
		start--
	}
	slices.Sort(rules[start:])
}

// UnifiedDiff is a unified diff from want (upstream) to got (svclab).
func UnifiedDiff(want, got string) string {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(want),
		B:        difflib.SplitLines(got),
		FromFile: "upstream kube-proxy",
		ToFile:   "svclab",
		Context:  3,
	})
	if err != nil {
		return err.Error()
	}
	return d
}
