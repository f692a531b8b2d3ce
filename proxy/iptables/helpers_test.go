package iptables_test

import (
	"fmt"
	"strings"
	"testing"
)

// builtinTargets are the -j targets that are not chains.
var builtinTargets = map[string]bool{
	"ACCEPT": true, "DROP": true, "REJECT": true, "RETURN": true,
	"DNAT": true, "MASQUERADE": true, "MARK": true,
}

var builtinChains = map[string]map[string]bool{
	"filter": {"INPUT": true, "FORWARD": true, "OUTPUT": true},
	"nat":    {"PREROUTING": true, "INPUT": true, "OUTPUT": true, "POSTROUTING": true},
}

// checkAllJumpTargetsDeclared checks a full-sync payload on its own: every
// "-A CHAIN" and every "-j TARGET" names a built-in or a chain declared in
// the same table section, and every section ends in COMMIT.
func checkAllJumpTargetsDeclared(t *testing.T, payload []byte) {
	t.Helper()
	for _, problem := range undeclaredChains(string(payload)) {
		t.Error(problem)
	}
}

func undeclaredChains(payload string) []string {
	var problems []string
	var table string
	var declared map[string]bool
	var jumps [][2]string // line, target
	for i, line := range strings.Split(strings.TrimRight(payload, "\n"), "\n") {
		fields := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "*"):
			if table != "" {
				problems = append(problems, fmt.Sprintf("table %s has no COMMIT before line %d", table, i+1))
			}
			table, declared, jumps = line[1:], map[string]bool{}, nil
		case line == "COMMIT":
			for _, j := range jumps {
				if !declared[j[1]] && !builtinTargets[j[1]] {
					problems = append(problems, fmt.Sprintf("table %s: %q jumps to undeclared chain %s", table, j[0], j[1]))
				}
			}
			table = ""
		case strings.HasPrefix(line, ":"):
			declared[fields[0][1:]] = true
		case len(fields) >= 2 && fields[0] == "-A":
			if !declared[fields[1]] && !builtinChains[table][fields[1]] {
				problems = append(problems, fmt.Sprintf("table %s: rule in undeclared chain: %q", table, line))
			}
			for k := 0; k+1 < len(fields); k++ {
				if fields[k] == "-j" {
					jumps = append(jumps, [2]string{line, fields[k+1]})
				}
			}
		}
	}
	if table != "" {
		problems = append(problems, fmt.Sprintf("table %s has no COMMIT", table))
	}
	return problems
}

func TestUndeclaredChainsCheckerCatchesMistakes(t *testing.T) {
	bad := "*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j KUBE-SVC-MISSING\n-A KUBE-NOWHERE -j ACCEPT\nCOMMIT\n*filter\n:KUBE-X - [0:0]\n"
	problems := undeclaredChains(bad)
	if len(problems) != 3 {
		t.Fatalf("want 3 problems (missing target, undeclared chain, missing COMMIT), got %q", problems)
	}
}
