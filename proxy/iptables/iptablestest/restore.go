package iptablestest

import (
	"fmt"
	"strings"
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

// lineError is a failure at one input line.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// applyRestore applies data to d the way iptables-restore does: each table
// section is checked as it is read and replaces the table at its COMMIT, so
// a failure in a later table leaves earlier ones applied (this is what both
// the legacy and the nf_tables backends do).
func applyRestore(d *Dump, data []byte, mode restoreMode) error {
	var cur *Table
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		fail := func(format string, args ...any) error {
			return &lineError{line: n, msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case line[0] == '*':
			if cur != nil {
				return fail("COMMIT expected before table %s", line[1:])
			}
			name := line[1:]
			if existing := d.Tables[name]; existing != nil {
				cur = existing.clone()
			} else if _, known := builtinChains[name]; known {
				cur = newTable(name)
				if mode == modeSave {
					cur.Chains = map[string]*Chain{}
				}
			} else {
				return fail("unknown table %q", name)
			}
		case cur == nil:
			return fail("%q outside of a table", line)
		case line == "COMMIT":
			if err := checkJumps(cur); err != nil {
				return fail("%v", err)
			}
			d.Tables[cur.Name] = cur
			cur = nil
		case line[0] == ':':
			if err := declareChain(cur, line[1:], mode); err != nil {
				return fail("%v", err)
			}
		default:
			if err := applyCommand(cur, line); err != nil {
				return fail("%v", err)
			}
		}
	}
	if cur != nil {
		return &lineError{line: len(lines) + 1, msg: "COMMIT expected at end of input"}
	}
	return nil
}

func declareChain(t *Table, decl string, mode restoreMode) error {
	fields := strings.Fields(decl)
	if len(fields) < 2 {
		return fmt.Errorf("bad chain line %q", decl)
	}
	name, policy := fields[0], fields[1]
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

func applyCommand(t *Table, line string) error {
	args, err := tokenize(line)
	if err != nil {
		return err
	}
	if len(args) < 2 {
		return fmt.Errorf("command %q needs a chain", line)
	}
	cmd, chainName, rest := args[0], args[1], args[2:]
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
