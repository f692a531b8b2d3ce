package ipvs

import (
	"fmt"
	"slices"
	"strings"

	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
)

// fakeIPTables is a small in-memory iptkernel.Runner for this package's
// tests. proxy/iptables/iptablestest's fake refuses matches it cannot
// interpret, and the IPVS mode's rules use -m set, -m physdev and -m ipvs,
// so this one keeps rules as text. It still refuses what iptables-restore
// refuses here: a rule in a missing chain, a jump to a missing chain,
// deleting a missing rule, or a chain that is not empty or still used.
type fakeIPTables struct {
	tables   map[string]*fakeTable
	restores [][]byte
	jumps    int // EnsureJump calls
}

type fakeTable struct {
	chains []string            // in creation order, built-ins first
	rules  map[string][]string // chain → "-A CHAIN ..." lines
	policy map[string]bool     // built-in chains
}

var fakeBuiltins = map[string][]string{
	"nat":    {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
	"filter": {"INPUT", "FORWARD", "OUTPUT"},
	"mangle": {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"},
}

var fakeTargets = []string{"ACCEPT", "DROP", "RETURN", "REJECT", "MARK", "MASQUERADE", "DNAT", "SNAT"}

func newFakeIPTables() *fakeIPTables {
	f := &fakeIPTables{tables: map[string]*fakeTable{}}
	for name, builtins := range fakeBuiltins {
		t := &fakeTable{rules: map[string][]string{}, policy: map[string]bool{}}
		for _, c := range builtins {
			t.chains = append(t.chains, c)
			t.policy[c] = true
		}
		f.tables[name] = t
	}
	return f
}

func (f *fakeIPTables) HasRandomFully() bool { return true }

func (f *fakeIPTables) Save(table string) ([]byte, error) {
	t := f.tables[table]
	if t == nil {
		return nil, fmt.Errorf("no table %s", table)
	}
	var b strings.Builder
	b.WriteString("*" + table + "\n")
	for _, c := range t.chains {
		if t.policy[c] {
			b.WriteString(":" + c + " ACCEPT [0:0]\n")
		} else {
			b.WriteString(":" + c + " - [0:0]\n")
		}
	}
	for _, c := range t.chains {
		for _, r := range t.rules[c] {
			b.WriteString(r + "\n")
		}
	}
	b.WriteString("COMMIT\n")
	return []byte(b.String()), nil
}

func (f *fakeIPTables) EnsureJump(j iptkernel.JumpRule) error {
	f.jumps++
	t := f.tables[j.Table]
	if !slices.Contains(t.chains, j.Target) {
		t.chains = append(t.chains, j.Target)
	}
	rule := "-A " + j.Chain + " " + strings.Join(quoteArgs(j.Args()), " ")
	if !slices.Contains(t.rules[j.Chain], rule) {
		t.rules[j.Chain] = append([]string{rule}, t.rules[j.Chain]...)
	}
	return nil
}

// Restore applies a --noflush payload; a table is replaced at its COMMIT.
func (f *fakeIPTables) Restore(payload []byte) error {
	f.restores = append(f.restores, payload)
	var name string
	var t *fakeTable
	for n, line := range strings.Split(string(payload), "\n") {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("iptables-restore (fake): line %d %q: %s", n+1, line, fmt.Sprintf(format, args...))
		}
		fields := strings.Fields(line)
		switch {
		case line == "":
		case line[0] == '*':
			name = line[1:]
			orig := f.tables[name]
			if orig == nil {
				return fail("unknown table")
			}
			t = &fakeTable{chains: slices.Clone(orig.chains), rules: map[string][]string{}, policy: orig.policy}
			for c, r := range orig.rules {
				t.rules[c] = slices.Clone(r)
			}
		case line == "COMMIT":
			for _, c := range t.chains {
				for _, r := range t.rules[c] {
					if target := jumpTarget(r); target != "" && !slices.Contains(fakeTargets, target) && !slices.Contains(t.chains, target) {
						return fail("rule %q jumps to missing chain %s", r, target)
					}
				}
			}
			f.tables[name] = t
			t = nil
		case t == nil:
			return fail("outside a table")
		case line[0] == ':':
			c := fields[0][1:]
			if !slices.Contains(t.chains, c) {
				t.chains = append(t.chains, c)
			}
			t.rules[c] = nil
		case fields[0] == "-A":
			if !slices.Contains(t.chains, fields[1]) {
				return fail("no chain %s", fields[1])
			}
			t.rules[fields[1]] = append(t.rules[fields[1]], line)
		case fields[0] == "-D":
			rule := "-A " + strings.TrimPrefix(line, "-D ")
			i := slices.Index(t.rules[fields[1]], rule)
			if i < 0 {
				return fail("no such rule")
			}
			t.rules[fields[1]] = slices.Delete(t.rules[fields[1]], i, i+1)
		case fields[0] == "-X":
			c := fields[1]
			if len(t.rules[c]) > 0 {
				return fail("chain %s is not empty", c)
			}
			for _, other := range t.chains {
				for _, r := range t.rules[other] {
					if jumpTarget(r) == c {
						return fail("chain %s is used by %q", c, r)
					}
				}
			}
			t.chains = slices.DeleteFunc(t.chains, func(s string) bool { return s == c })
		default:
			return fail("unsupported command")
		}
	}
	if t != nil {
		return fmt.Errorf("iptables-restore (fake): COMMIT expected")
	}
	return nil
}

func jumpTarget(rule string) string {
	f := strings.Fields(rule)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "-j" || f[i] == "-g" {
			return f[i+1]
		}
	}
	return ""
}

// rules returns a table's rules in save order.
func (f *fakeIPTables) rules(table string) []string {
	t := f.tables[table]
	var out []string
	for _, c := range t.chains {
		out = append(out, t.rules[c]...)
	}
	return out
}
