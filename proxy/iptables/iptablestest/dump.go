package iptablestest

import (
	"slices"
	"strings"
)

// builtinChains are the chains each table starts with, in iptables-save
// order.
var builtinChains = map[string][]string{
	"filter": {"INPUT", "FORWARD", "OUTPUT"},
	"nat":    {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
	"mangle": {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"},
	"raw":    {"PREROUTING", "OUTPUT"},
}

// Dump is a set of iptables tables, as iptables-save shows them.
type Dump struct {
	Tables map[string]*Table
}

// Table is one table's chains.
type Table struct {
	Name   string
	Chains map[string]*Chain
}

// Chain is one chain and its rules in order.
type Chain struct {
	Name    string
	Builtin bool
	// Policy is ACCEPT or DROP for built-in chains, "-" for user chains.
	Policy string
	Rules  []*Rule
}

// NewDump returns the tables a fresh network namespace has: filter and nat
// with their empty built-in chains.
func NewDump() *Dump {
	d := &Dump{Tables: map[string]*Table{}}
	for _, name := range []string{"filter", "nat"} {
		d.Tables[name] = newTable(name)
	}
	return d
}

func newTable(name string) *Table {
	t := &Table{Name: name, Chains: map[string]*Chain{}}
	for _, c := range builtinChains[name] {
		t.Chains[c] = &Chain{Name: c, Builtin: true, Policy: "ACCEPT"}
	}
	return t
}

// Chain returns a chain, or nil when the table or chain does not exist.
func (d *Dump) Chain(table, chain string) *Chain {
	t := d.Tables[table]
	if t == nil {
		return nil
	}
	return t.Chains[chain]
}

// ChainNames lists a table's chains: built-in ones first in their usual
// order, then the others sorted, as iptables-save prints them.
func (t *Table) ChainNames() []string {
	var builtin, user []string
	for name, c := range t.Chains {
		if c.Builtin {
			builtin = append(builtin, name)
		} else {
			user = append(user, name)
		}
	}
	order := builtinChains[t.Name]
	slices.SortFunc(builtin, func(a, b string) int {
		return slices.Index(order, a) - slices.Index(order, b)
	})
	slices.Sort(user)
	return append(builtin, user...)
}

// Save renders the table in iptables-save format (without the "#" lines
// and counters).
func (t *Table) Save() string {
	var b strings.Builder
	b.WriteString("*" + t.Name + "\n")
	names := t.ChainNames()
	for _, name := range names {
		b.WriteString(":" + name + " " + t.Chains[name].Policy + " [0:0]\n")
	}
	for _, name := range names {
		for _, r := range t.Chains[name].Rules {
			b.WriteString(r.String() + "\n")
		}
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

// clone copies the table so that it can be changed without touching the
// original. Rules are shared: they are never modified.
func (t *Table) clone() *Table {
	c := &Table{Name: t.Name, Chains: make(map[string]*Chain, len(t.Chains))}
	for name, ch := range t.Chains {
		cc := *ch
		cc.Rules = slices.Clone(ch.Rules)
		c.Chains[name] = &cc
	}
	return c
}

// references lists the rules of the table that jump to chain.
func (t *Table) references(chain string) []*Rule {
	var out []*Rule
	for _, c := range t.Chains {
		for _, r := range c.Rules {
			if r.Jump == chain {
				out = append(out, r)
			}
		}
	}
	return out
}
