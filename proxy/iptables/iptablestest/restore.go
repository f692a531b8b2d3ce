package iptablestest

import (
	"fmt"

	"github.com/svclab/svclab/internal/iptsave"
)

// builtinTargets are the targets that are not chains, with the tables they
// are valid in (nil: any table).
var builtinTargets = map[string][]string{
	"ACCEPT":     nil,
	"DROP":       nil,
	"RETURN":     nil,
	"LOG":        nil,
	"MARK":       nil,
	"CONNMARK":   nil,
	"REJECT":     {"filter", "mangle"},
	"DNAT":       {"nat"},
	"SNAT":       {"nat"},
	"MASQUERADE": {"nat"},
	"REDIRECT":   {"nat"},
}

// maxChainNameLength is the kernel's limit (XT_EXTENSION_MAXNAMELEN - 1).
const maxChainNameLength = 28

// restoreMode says how applyRestore treats its input.
type restoreMode int

const (
	// modeNoFlush is `iptables-restore --noflush`: tables and chains not
	// mentioned are kept; a declared user chain is flushed.
	modeNoFlush restoreMode = iota
	// modeSave reads iptables-save output into empty tables.
	modeSave
)

// applyRestore applies data to d the way iptables-restore does: each table
// section is checked as it is read and replaces the table at its COMMIT, so
// a failure in a later table leaves earlier ones applied (this is what both
// the legacy and the nf_tables backends do). iptsave.Scan reads the lines
// and their framing; a failure is an *iptsave.Error naming its line.
func applyRestore(d *Dump, data []byte, mode restoreMode) error {
	r := &restorer{dump: d, mode: mode}
	return iptsave.Scan(string(data), r.apply)
}

// restorer applies one payload's lines to its dump.
type restorer struct {
	dump *Dump
	mode restoreMode
	// table is the section being read: a copy of the dump's table, put in
	// place at COMMIT.
	table *Table
}

func (r *restorer) apply(l iptsave.Line) error {
	switch l.Kind {
	case iptsave.TableHeader:
		return r.begin(l.Table)
	case iptsave.ChainDeclaration:
		return declareChain(r.table, l.Chain, l.Policy, r.mode)
	case iptsave.Command:
		return applyCommand(r.table, l)
	case iptsave.Commit:
		if err := checkJumps(r.table); err != nil {
			return err
		}
		r.dump.Tables[r.table.Name] = r.table
		r.table = nil
	}
	return nil
}

// begin starts a table's section on a copy of the table.
func (r *restorer) begin(name string) error {
	if existing := r.dump.Tables[name]; existing != nil {
		r.table = existing.clone()
		return nil
	}
	if _, known := builtinChains[name]; !known {
		return fmt.Errorf("unknown table %q", name)
	}
	r.table = newTable(name)
	if r.mode == modeSave {
		r.table.Chains = map[string]*Chain{}
	}
	return nil
}

func declareChain(t *Table, name, policy string, mode restoreMode) error {
	if len(name) > maxChainNameLength {
		return fmt.Errorf("chain name %q is longer than %d characters", name, maxChainNameLength)
	}
	if c := t.Chains[name]; c != nil && c.Builtin {
		if policy == "-" {
			return fmt.Errorf("built-in chain %s needs a policy", name)
		}
		c.Policy = policy
		return nil
	}
	if mode == modeSave && policy != "-" {
		t.Chains[name] = &Chain{Name: name, Builtin: true, Policy: policy}
		return nil
	}
	if policy != "-" {
		return fmt.Errorf("user chain %s cannot have policy %s", name, policy)
	}
	// Declaring a user chain creates it, or flushes it if it exists.
	t.Chains[name] = &Chain{Name: name, Policy: "-"}
	return nil
}

func applyCommand(t *Table, l iptsave.Line) error {
	rest, err := iptsave.Fields(l.Spec)
	if err != nil {
		return err
	}
	cmd, chainName := l.Op, l.Chain
	if chainName == "" {
		return fmt.Errorf("command %s needs a chain", cmd)
	}
	chain := t.Chains[chainName]
	if chain == nil {
		return fmt.Errorf("%s: chain %s does not exist in table %s", cmd, chainName, t.Name)
	}
	switch cmd {
	case "-A", "--append", "-I", "--insert":
		rule, err := ParseRule(chainName, rest)
		if err != nil {
			return err
		}
		if cmd == "-A" || cmd == "--append" {
			chain.Rules = append(chain.Rules, rule)
		} else {
			chain.Rules = append([]*Rule{rule}, chain.Rules...)
		}
	case "-F", "--flush":
		chain.Rules = nil
	case "-X", "--delete-chain":
		if chain.Builtin {
			return fmt.Errorf("-X: cannot delete built-in chain %s", chainName)
		}
		if len(chain.Rules) > 0 {
			return fmt.Errorf("-X: chain %s is not empty", chainName)
		}
		if refs := t.references(chainName); len(refs) > 0 {
			return fmt.Errorf("-X: chain %s is still referenced by %q", chainName, refs[0].String())
		}
		delete(t.Chains, chainName)
	default:
		return fmt.Errorf("command %q is not supported", cmd)
	}
	return nil
}

// checkJumps verifies that every rule's target exists in the table.
func checkJumps(t *Table) error {
	for _, name := range t.ChainNames() {
		for _, r := range t.Chains[name].Rules {
			if r.Jump == "" {
				continue
			}
			if tables, builtin := builtinTargets[r.Jump]; builtin {
				if tables != nil && !contains(tables, t.Name) {
					return fmt.Errorf("target %s is not valid in table %s (rule %q)", r.Jump, t.Name, r.String())
				}
				continue
			}
			if t.Chains[r.Jump] == nil {
				return fmt.Errorf("chain '%s' does not exist (jump in %q)", r.Jump, r.String())
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ParseSave reads iptables-save output (or a full restore payload) into a
// Dump holding only the tables it mentions.
func ParseSave(data []byte) (*Dump, error) {
	d := &Dump{Tables: map[string]*Table{}}
	if err := applyRestore(d, data, modeSave); err != nil {
		return nil, err
	}
	return d, nil
}
