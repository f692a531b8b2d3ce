package kernel

import (
	"bytes"
	"maps"
	"slices"
	"strings"
)

// JumpEnsurer is a Runner that ensures a full sync's jump rules together
// (ExecRunner); Sync falls back to EnsureJump one rule at a time.
type JumpEnsurer interface {
	// EnsureJumps leaves the tables as EnsureJump called for each rule in
	// order would: every target chain exists, every rule is in its
	// built-in chain, a missing one inserted first. It returns the chains
	// of each table the rules name as the table holds them afterwards (what
	// it read, and the targets it added), so that a full sync need not
	// save the table again to learn which chains exist.
	EnsureJumps(rules []JumpRule) (TableChains, error)
}

// TableChains are the chains of tables by table name, each list sorted.
type TableChains map[string][]string

// EnsureJumps implements JumpEnsurer. Upstream runs `iptables -N`, `-C`
// and `-I` for each of its 14 jumps (42 execs on a new node, each reading
// the whole table): at 100 lab nodes that was a third of bringing up the
// proxies. Here one iptables-save per table says what is there, and one
// `iptables-restore --noflush` adds what is missing, in the order the
// single calls would. A rule whose target the saved chain jumps to, in a
// form other than the rule's, is asked with `iptables -C` (the kernel's
// comparison, not the text's) before it is added.
func (r *ExecRunner) EnsureJumps(rules []JumpRule) (TableChains, error) {
	saved := map[string]savedTable{}
	var tables []string // in the order the rules name them
	for _, rule := range rules {
		if _, ok := saved[rule.Table]; ok {
			continue
		}
		out, err := r.Save(rule.Table)
		if err != nil {
			return nil, err
		}
		saved[rule.Table] = parseSavedTable(out)
		tables = append(tables, rule.Table)
	}
	missing := map[string][]string{} // table → restore lines
	for _, rule := range rules {
		t := saved[rule.Table]
		if !t.chains[rule.Target] {
			missing[rule.Table] = append(missing[rule.Table], "-N "+rule.Target)
			t.chains[rule.Target] = true
		}
		switch t.has(rule) {
		case jumpPresent:
			continue
		case jumpUnsure:
			exists, err := r.ruleExists(rule.Table, rule.Chain, rule.Args())
			if err != nil {
				return nil, err
			}
			if exists {
				continue
			}
		}
		missing[rule.Table] = append(missing[rule.Table], "-I "+rule.Chain+" "+restoreArgs(rule.Args()))
	}
	var payload bytes.Buffer
	for _, table := range tables {
		if lines := missing[table]; len(lines) > 0 {
			payload.WriteString("*" + table + "\n" + strings.Join(lines, "\n") + "\nCOMMIT\n")
		}
	}
	if payload.Len() > 0 {
		if err := r.Restore(payload.Bytes()); err != nil {
			return nil, err
		}
	}
	chains := TableChains{}
	for table, t := range saved {
		chains[table] = slices.Sorted(maps.Keys(t.chains))
	}
	return chains, nil
}

// savedTable is what EnsureJumps reads of one table's iptables-save.
type savedTable struct {
	chains map[string]bool
	rules  map[string][]string // chain → its "-A" lines, as saved
}

func parseSavedTable(out []byte) savedTable {
	t := savedTable{chains: map[string]bool{}, rules: map[string][]string{}}
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, ":"):
			if name, _, ok := strings.Cut(line[1:], " "); ok {
				t.chains[name] = true
			}
		case strings.HasPrefix(line, "-A "):
			if chain, _, ok := strings.Cut(line[3:], " "); ok {
				t.rules[chain] = append(t.rules[chain], line)
			}
		}
	}
	return t
}

type jumpState int

const (
	jumpAbsent  jumpState = iota // no rule of the chain jumps to the target
	jumpPresent                  // the rule is there, as iptables-save prints it
	jumpUnsure                   // a rule jumps to the target, in another form
)

// has says whether rule is in the saved table. A jump is saved with
// "-j TARGET"; a chain without one cannot hold the rule.
func (t savedTable) has(rule JumpRule) jumpState {
	want := "-A " + rule.Chain + " " + restoreArgs(rule.Args())
	state := jumpAbsent
	for _, line := range t.rules[rule.Chain] {
		if line == want {
			return jumpPresent
		}
		fields := strings.Fields(line)
		if i := slices.Index(fields, "-j"); i >= 0 && i+1 < len(fields) && fields[i+1] == rule.Target {
			state = jumpUnsure
		}
	}
	return state
}

// restoreArgs joins a rule's arguments as iptables-save prints them and
// iptables-restore reads them: an argument with a space in double quotes.
func restoreArgs(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") {
			a = `"` + strings.ReplaceAll(strings.ReplaceAll(a, `\`, `\\`), `"`, `\"`) + `"`
		}
		quoted[i] = a
	}
	return strings.Join(quoted, " ")
}
