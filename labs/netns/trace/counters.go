package trace

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxSaveSize bounds one table's iptables-save text that ParseSave reads.
const MaxSaveSize = 64 << 20

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

// ParseSave reads one or more tables of `iptables-save -c` output. It
// refuses what iptables-save never prints: a rule outside a table, a rule
// of an undeclared chain, a malformed counter.
func ParseSave(text string) ([]SavedTable, error) {
	if len(text) > MaxSaveSize {
		return nil, fmt.Errorf("iptables-save output of %d bytes: more than %d", len(text), MaxSaveSize)
	}
	var tables []SavedTable
	var cur *SavedTable
	declared := map[string]bool{}
	count := map[string]int{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		where := func(err error) error { return fmt.Errorf("iptables-save line %d: %w", n+1, err) }
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "*"):
			if cur != nil {
				return nil, where(fmt.Errorf("table %q begins before %q's COMMIT", line[1:], cur.Name))
			}
			for _, t := range tables {
				if t.Name == line[1:] {
					return nil, where(fmt.Errorf("table %s twice", t.Name))
				}
			}
			tables = append(tables, SavedTable{Name: line[1:]})
			cur = &tables[len(tables)-1]
			declared, count = map[string]bool{}, map[string]int{}
		case line == "COMMIT":
			if cur == nil {
				return nil, where(fmt.Errorf("COMMIT outside a table"))
			}
			cur = nil
		case strings.HasPrefix(line, ":"):
			if cur == nil {
				return nil, where(fmt.Errorf("chain outside a table"))
			}
			r, err := parsePolicy(cur.Name, line[1:])
			if err != nil {
				return nil, where(err)
			}
			if declared[r.Chain] {
				return nil, where(fmt.Errorf("chain %s declared twice", r.Chain))
			}
			declared[r.Chain] = true
			cur.Chains = append(cur.Chains, r.Chain)
			if r.Policy != "-" {
				cur.Rules = append(cur.Rules, r)
			}
		default:
			if cur == nil {
				return nil, where(fmt.Errorf("rule outside a table"))
			}
			r, err := parseRule(cur.Name, line)
			if err != nil {
				return nil, where(err)
			}
			if !declared[r.Chain] {
				return nil, where(fmt.Errorf("rule of undeclared chain %s", r.Chain))
			}
			count[r.Chain]++
			r.Index = count[r.Chain]
			cur.Rules = append(cur.Rules, r)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("iptables-save: table %s has no COMMIT", cur.Name)
	}
	return tables, nil
}

// parsePolicy reads "CHAIN POLICY [p:b]".
func parsePolicy(table, s string) (SavedRule, error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return SavedRule{}, fmt.Errorf("chain line %q: want NAME POLICY [PACKETS:BYTES]", s)
	}
	p, b, err := parseCounters(f[2])
	if err != nil {
		return SavedRule{}, fmt.Errorf("chain %s: %w", f[0], err)
	}
	return SavedRule{Table: table, Chain: f[0], Policy: f[1], Packets: p, Bytes: b}, nil
}

// parseRule reads "[p:b] -A CHAIN spec".
func parseRule(table, line string) (SavedRule, error) {
	end := strings.IndexByte(line, ']')
	if !strings.HasPrefix(line, "[") || end < 0 {
		return SavedRule{}, fmt.Errorf("rule %q: want [PACKETS:BYTES] -A CHAIN ... (iptables-save -c)", clip(line))
	}
	p, b, err := parseCounters(line[:end+1])
	if err != nil {
		return SavedRule{}, err
	}
	rest := strings.TrimPrefix(line[end+1:], " ")
	if !strings.HasPrefix(rest, "-A ") {
		return SavedRule{}, fmt.Errorf("rule %q: want -A after the counters", clip(line))
	}
	rest = rest[3:]
	chain, spec, _ := strings.Cut(rest, " ")
	if chain == "" {
		return SavedRule{}, fmt.Errorf("rule %q: no chain", clip(line))
	}
	return SavedRule{Table: table, Chain: chain, Packets: p, Bytes: b, Spec: spec}, nil
}

// parseCounters reads "[PACKETS:BYTES]".
func parseCounters(s string) (uint64, uint64, error) {
	if len(s) < 5 || s[0] != '[' || s[len(s)-1] != ']' {
		return 0, 0, fmt.Errorf("counters %q: want [PACKETS:BYTES]", clip(s))
	}
	ps, bs, ok := strings.Cut(s[1:len(s)-1], ":")
	p, err1 := strconv.ParseUint(ps, 10, 64)
	b, err2 := strconv.ParseUint(bs, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("counters %q: want [PACKETS:BYTES]", clip(s))
	}
	return p, b, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
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
