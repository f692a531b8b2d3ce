package kernel

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

// testJumps are rules of both tables, two in one chain and one target
// jumped to from two chains, as a full sync's (the renderer's 14 are
// checked the same way by proxy/iptables' integration tests).
var testJumps = []JumpRule{
	{Table: "filter", Chain: "INPUT", Target: "KUBE-EXTERNAL-SERVICES", Comment: "kubernetes externally-visible service portals", Match: []string{"-m", "conntrack", "--ctstate", "NEW"}},
	{Table: "filter", Chain: "FORWARD", Target: "KUBE-EXTERNAL-SERVICES", Comment: "kubernetes externally-visible service portals", Match: []string{"-m", "conntrack", "--ctstate", "NEW"}},
	{Table: "filter", Chain: "INPUT", Target: "KUBE-NODEPORTS", Comment: "kubernetes health check service ports"},
	{Table: "nat", Chain: "PREROUTING", Target: "KUBE-SERVICES", Comment: "kubernetes service portals"},
	{Table: "nat", Chain: "OUTPUT", Target: "KUBE-SERVICES", Comment: "kubernetes service portals"},
	{Table: "filter", Chain: "INPUT", Target: "KUBE-FIREWALL"},
}

// savedRules is iptables-save of filter and nat: chains and rules, without
// comments and counters.
func savedRules(t *testing.T, r *ExecRunner) string {
	t.Helper()
	var lines []string
	for _, table := range []string{"filter", "nat"} {
		out, err := r.Save(table)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(out)) {
			if strings.HasPrefix(line, "-A") || strings.HasPrefix(line, ":") && !strings.Contains(line, "ACCEPT") {
				lines = append(lines, table+" "+strings.TrimSpace(line))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// TestIntegrationEnsureJumpsAsOneByOne: on an empty namespace, on one that
// already has them all, and on one where a chain jumps to a target in
// another form, EnsureJumps leaves filter and nat exactly as EnsureJump
// rule by rule does, in both backends, and the chains it says each table
// holds are those iptables-save then shows; afterwards every rule reads as
// present from iptables-save's text, so a later full sync runs no
// `iptables -C`.
func TestIntegrationEnsureJumpsAsOneByOne(t *testing.T) {
	roottest.Require(t, "creates network namespaces and runs iptables in them")
	for _, backend := range []Backend{BackendLegacy, BackendNFT} {
		t.Run(string(backend), func(t *testing.T) {
			runners := func(prepare func(r *ExecRunner)) (together, single *ExecRunner) {
				for _, r := range []**ExecRunner{&together, &single} {
					var err error
					*r, err = NewExecRunner(ExecOptions{Backend: backend, NetNS: roottest.Netns(t, "svclabtest")})
					if err != nil {
						t.Fatalf("iptables %s backend unusable (install the iptables package): %v", backend, err)
					}
					prepare(*r)
				}
				return together, single
			}
			check := func(what string, together, single *ExecRunner) {
				t.Helper()
				chains, err := together.EnsureJumps(testJumps)
				if err != nil {
					t.Fatalf("%s: EnsureJumps: %v", what, err)
				}
				for _, table := range []string{"filter", "nat"} {
					out, err := together.Save(table)
					if err != nil {
						t.Fatal(err)
					}
					want := slices.Sorted(maps.Keys(parseSavedTable(out).chains))
					if !slices.Equal(chains[table], want) {
						t.Errorf("%s: EnsureJumps says %s holds the chains %v, iptables-save shows %v", what, table, chains[table], want)
					}
				}
				for _, j := range testJumps {
					if err := single.EnsureJump(j); err != nil {
						t.Fatalf("%s: EnsureJump %v: %v", what, j, err)
					}
				}
				if got, want := savedRules(t, together), savedRules(t, single); got != want {
					t.Errorf("%s: together\n%s\n\none by one\n%s", what, got, want)
				}
			}
			together, single := runners(func(*ExecRunner) {})
			check("empty namespace", together, single)
			check("every jump there already", together, single)
			for _, table := range []string{"filter", "nat"} {
				out, err := together.Save(table)
				if err != nil {
					t.Fatal(err)
				}
				saved := parseSavedTable(out)
				for _, j := range testJumps {
					if j.Table == table && saved.has(j) != jumpPresent {
						t.Errorf("%v: not found in iptables-save's text:\n%s", j, out)
					}
				}
			}

			together, single = runners(func(r *ExecRunner) {
				if err := r.Restore([]byte("*filter\n:KUBE-FIREWALL - [0:0]\n-A INPUT -p tcp -m comment --comment \"another rule\" -j KUBE-FIREWALL\nCOMMIT\n")); err != nil {
					t.Fatal(err)
				}
			})
			check("a jump to KUBE-FIREWALL of another form", together, single)
		})
	}
}

// TestRestoreArgsAsIPTablesSaveQuotes: an argument with a space is quoted,
// the others are not.
func TestRestoreArgsAsIPTablesSaveQuotes(t *testing.T) {
	got := restoreArgs([]string{"-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"})
	if want := `-m comment --comment "kubernetes service portals" -j KUBE-SERVICES`; got != want {
		t.Errorf("restoreArgs = %s, want %s", got, want)
	}
}
