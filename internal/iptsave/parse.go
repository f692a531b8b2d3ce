package iptsave

import (
	"fmt"
	"strings"
)

// Table is one table of iptables-save output.
type Table struct {
	Name string
	// Chains are the chains declared, in order.
	Chains []Chain
	// Rules are the table's rules in the order written, which iptables-save
	// groups by chain.
	Rules []Rule
}

// Chain is one chain declaration.
type Chain struct {
	Name string
	// Policy is ACCEPT or DROP for a built-in chain, "-" for a user chain.
	Policy string
	// Counters are the policy's (iptables-save writes [0:0] for a user
	// chain, and for every chain without -c).
	Counters Counters
	// Line is the declaration's line number.
	Line int
}

// Rule is one "-A CHAIN spec" line.
type Rule struct {
	Chain string
	// Index is the rule's position in its chain, from 1 (iptables -L
	// --line-numbers).
	Index int
	// Counters are the rule's, when HasCounters (iptables-save -c).
	Counters    Counters
	HasCounters bool
	// Spec is the rule after "-A CHAIN ", as written; Fields splits it.
	Spec string
	// Line is the rule's line number.
	Line int
}

// String gives the rule back as iptables-save writes it.
func (r Rule) String() string {
	var b strings.Builder
	if r.HasCounters {
		fmt.Fprintf(&b, "[%d:%d] ", r.Counters.Packets, r.Counters.Bytes)
	}
	b.WriteString("-A " + r.Chain)
	if r.Spec != "" {
		b.WriteString(" " + r.Spec)
	}
	return b.String()
}

// ChainRules are the rules of chain, in order.
func (t *Table) ChainRules(chain string) []Rule {
	var out []Rule
	for _, r := range t.Rules {
		if r.Chain == chain {
			out = append(out, r)
		}
	}
	return out
}

// Parse reads iptables-save output, with or without counters, into its
// tables in order. Besides Scan's framing it refuses what iptables-save
// never writes: a table twice, a chain declared twice, a command other than
// -A, a rule of a chain its table did not declare. Errors are an *Error.
func Parse(text string) ([]Table, error) {
	var p parser
	if err := Scan(text, p.line); err != nil {
		return nil, err
	}
	return p.tables, nil
}

// parser builds Parse's tables from Scan's lines.
type parser struct {
	tables []Table
	// declared and count are the open table's chains and their rules so far.
	declared map[string]bool
	count    map[string]int
}

func (p *parser) line(l Line) error {
	switch l.Kind {
	case TableHeader:
		return p.table(l)
	case ChainDeclaration:
		return p.chain(l)
	case Command:
		return p.rule(l)
	}
	return nil
}

func (p *parser) table(l Line) error {
	for _, t := range p.tables {
		if t.Name == l.Table {
			return fmt.Errorf("table %s twice", l.Table)
		}
	}
	p.tables = append(p.tables, Table{Name: l.Table})
	p.declared, p.count = map[string]bool{}, map[string]int{}
	return nil
}

func (p *parser) chain(l Line) error {
	if p.declared[l.Chain] {
		return fmt.Errorf("chain %s declared twice", l.Chain)
	}
	p.declared[l.Chain] = true
	t := &p.tables[len(p.tables)-1]
	t.Chains = append(t.Chains, Chain{Name: l.Chain, Policy: l.Policy, Counters: l.Counters, Line: l.Number})
	return nil
}

func (p *parser) rule(l Line) error {
	if l.Op != "-A" || l.Chain == "" {
		return fmt.Errorf("%s %s: want -A CHAIN …, as iptables-save writes", l.Op, clip(l.Chain))
	}
	if !p.declared[l.Chain] {
		return fmt.Errorf("rule of undeclared chain %s", l.Chain)
	}
	p.count[l.Chain]++
	t := &p.tables[len(p.tables)-1]
	t.Rules = append(t.Rules, Rule{
		Chain: l.Chain, Index: p.count[l.Chain],
		Counters: l.Counters, HasCounters: l.HasCounters,
		Spec: l.Spec, Line: l.Number,
	})
	return nil
}

// ChainNames lists the chains text declares, built-in ones included, in
// order. It reads leniently, for a caller that wants only the chains of
// one table's iptables-save output: any line that is not a well-formed
// chain declaration is skipped. Upstream: utiliptables.GetChainsFromTable.
func ChainNames(text string) []string {
	var names []string
	for rest := text; rest != ""; {
		var raw string
		raw, rest, _ = strings.Cut(rest, "\n")
		if !strings.HasPrefix(strings.TrimLeft(raw, " \t"), ":") {
			continue
		}
		if l, err := ParseLine(raw); err == nil {
			names = append(names, l.Chain)
		}
	}
	return names
}
