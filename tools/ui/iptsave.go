package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/svclab/svclab/internal/iptsave"
)

// chainOrder sorts the nat table's KUBE chains in the order a packet meets
// them: the entry chains, then per Service its firewall, external, service
// and endpoint chains, then the masquerade chains.
var chainOrder = []string{"KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-FW-", "KUBE-EXT-", "KUBE-SVC-", "KUBE-SVL-", "KUBE-SEP-", "KUBE-MARK-MASQ", "KUBE-POSTROUTING"}

// ParseNATCounters reads `iptables-save -c -t nat` (iptsave.Parse, which
// bounds its size) and returns its KUBE chains (every chain whose name
// starts with KUBE-), each with its rules and their packet and byte
// counters, in chainOrder (by name within a kind). Other chains, the
// built-in chains' own rules and other tables are left out; a rule of a
// KUBE chain without counters is an error.
func ParseNATCounters(save string) ([]Chain, error) {
	tables, err := iptsave.Parse(save)
	if err != nil {
		return nil, fmt.Errorf("iptables-save: %w", err)
	}
	i := slices.IndexFunc(tables, func(t iptsave.Table) bool { return t.Name == "nat" })
	if i < 0 {
		return []Chain{}, nil
	}
	nat := tables[i]
	chains := map[string]*Chain{}
	var names []string
	for _, c := range nat.Chains {
		if isKubeChain(c.Name) {
			chains[c.Name] = &Chain{Name: c.Name, Rules: []Rule{}}
			names = append(names, c.Name)
		}
	}
	for _, r := range nat.Rules {
		c := chains[r.Chain]
		if c == nil {
			continue
		}
		rule, err := countedRule(r)
		if err != nil {
			return nil, fmt.Errorf("iptables-save: line %d: %w", r.Line, err)
		}
		c.Rules = append(c.Rules, rule)
	}
	slices.SortStableFunc(names, func(a, b string) int {
		if d := chainRank(a) - chainRank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	out := make([]Chain, 0, len(names))
	for _, name := range names {
		out = append(out, *chains[name])
	}
	return out, nil
}

func isKubeChain(name string) bool { return strings.HasPrefix(name, "KUBE-") }

// chainRank is a chain's place in chainOrder (after them all if none).
func chainRank(name string) int {
	for i, p := range chainOrder {
		if name == p || (strings.HasSuffix(p, "-") && strings.HasPrefix(name, p)) {
			return i
		}
	}
	return len(chainOrder)
}

// countedRule is r for the page: its counters, its comment and target
// taken out of its spec.
func countedRule(r iptsave.Rule) (Rule, error) {
	if !r.HasCounters {
		return Rule{}, fmt.Errorf("%q: want [PACKETS:BYTES] -A CHAIN … (iptables-save -c)", r.String())
	}
	words, err := iptsave.Fields(r.Spec)
	if err != nil {
		return Rule{}, fmt.Errorf("%q: %w", r.String(), err)
	}
	out := Rule{Packets: r.Counters.Packets, Bytes: r.Counters.Bytes}
	var spec []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-m" && i+1 < len(words) && words[i+1] == "comment":
			i++ // the comment module; its text follows
		case w == "--comment" && i+1 < len(words):
			i++
			out.Comment = words[i]
		case (w == "-j" || w == "-g") && i+1 < len(words):
			// As the spec spells it, quoted if it must be.
			out.Target = iptsave.Join(words[i+1 : i+2])
			spec = append(spec, w)
		default:
			spec = append(spec, w)
		}
	}
	out.Spec = iptsave.Join(spec)
	return out, nil
}
