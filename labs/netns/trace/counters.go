package trace

import (
	"fmt"

	"github.com/svclab/svclab/internal/iptsave"
)

// SavedRule is one rule of `iptables-save -c` output.
type SavedRule struct {
	Table string
	Chain string
	// Index is the rule's position in its chain, from 1 (iptables -L
	// --line-numbers). 0 is the chain's policy (built-in chains only).
	Index   int
	Packets uint64
	Bytes   uint64
	// Spec is the rule after "-A CHAIN " ("" for a policy: the policy's
	// verdict then is in Policy).
	Spec   string
	Policy string
}

// SavedTable is one table of iptables-save -c output: its chains in the
// order declared and their rules.
type SavedTable struct {
	Name   string
	Chains []string
	Rules  []SavedRule // policies first (Index 0), then rules in order
}

// ParseSave reads one or more tables of `iptables-save -c` output
// (iptsave.Parse, which bounds its size). Besides what iptsave refuses, it
// refuses a rule without counters.
func ParseSave(text string) ([]SavedTable, error) {
	tables, err := iptsave.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("iptables-save: %w", err)
	}
	out := make([]SavedTable, 0, len(tables))
	for _, t := range tables {
		st, err := savedTable(t)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// savedTable is t with its built-in chains' policies as rules of Index 0.
func savedTable(t iptsave.Table) (SavedTable, error) {
	st := SavedTable{Name: t.Name}
	for _, c := range t.Chains {
		st.Chains = append(st.Chains, c.Name)
		if c.Policy != "-" {
			st.Rules = append(st.Rules, SavedRule{Table: t.Name, Chain: c.Name, Policy: c.Policy, Packets: c.Counters.Packets, Bytes: c.Counters.Bytes})
		}
	}
	for _, r := range t.Rules {
		if !r.HasCounters {
			return SavedTable{}, fmt.Errorf("iptables-save: line %d: rule %q has no [PACKETS:BYTES] (iptables-save -c)", r.Line, r.String())
		}
		st.Rules = append(st.Rules, SavedRule{Table: t.Name, Chain: r.Chain, Index: r.Index, Packets: r.Counters.Packets, Bytes: r.Counters.Bytes, Spec: r.Spec})
	}
	return st, nil
}

// Hit is a rule whose packet counter grew between two readings.
type Hit struct {
	SavedRule
	// Delta is how many packets it counted in between.
	Delta uint64
}

// Diff returns the rules of after whose packet counters grew since before,
// in after's order, and the chains it could not compare because their
// rules changed between the readings (a proxy resync rewrote them or
// reset their counters).
func Diff(before, after []SavedTable) (hits []Hit, changed []string) {
	type key struct {
		table, chain string
		index        int
	}
	old := map[key]SavedRule{}
	for _, t := range before {
		for _, r := range t.Rules {
			old[key{t.Name, r.Chain, r.Index}] = r
		}
	}
	seen := map[string]bool{}
	for _, t := range after {
		for _, r := range t.Rules {
			o, ok := old[key{t.Name, r.Chain, r.Index}]
			// A rewritten rule, or one whose counter went down (a proxy
			// restored its chain in between), cannot be compared.
			if !ok || o.Spec != r.Spec || o.Policy != r.Policy || r.Packets < o.Packets {
				if name := t.Name + " " + r.Chain; !seen[name] {
					seen[name] = true
					changed = append(changed, name)
				}
				continue
			}
			if r.Packets > o.Packets {
				hits = append(hits, Hit{SavedRule: r, Delta: r.Packets - o.Packets})
			}
		}
	}
	return hits, changed
}
