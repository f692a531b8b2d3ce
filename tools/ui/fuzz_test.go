package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseNATCounters: any input gives chains or one error, never a
// panic; what it returns are KUBE chains, each once, whose rules name
// their targets as the spec does.
func FuzzParseNATCounters(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "nat-counters.save")); err == nil {
		f.Add(string(data))
	}
	f.Add("*nat\n:KUBE-SVC-A - [0:0]\n[7:420] -A KUBE-SVC-A -m comment --comment \"a \\\" b\" -j KUBE-SEP-B\nCOMMIT\n")
	f.Add("*filter\n:KUBE-X - [0:0]\n[1:1] -A KUBE-X -j DROP\n")
	f.Fuzz(func(t *testing.T, save string) {
		chains, err := ParseNATCounters(save)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, c := range chains {
			if !strings.HasPrefix(c.Name, "KUBE-") || seen[c.Name] {
				t.Fatalf("chain %q (seen before: %v)", c.Name, seen[c.Name])
			}
			seen[c.Name] = true
			for _, r := range c.Rules {
				if r.Target != "" && !strings.Contains(r.Spec, r.Target) {
					t.Fatalf("rule %+v: target not in its spec", r)
				}
			}
		}
	})
}

// FuzzParseIPVSStats: any input gives virtual servers or one error, never
// a panic.
func FuzzParseIPVSStats(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "ipvs-stats.txt")); err == nil {
		f.Add(string(data))
	}
	f.Add("TCP  10.0.0.1:80 1 2 3 4 5\n  -> 10.0.0.2:80 1 2 3 4 5\n")
	f.Fuzz(func(t *testing.T, out string) {
		vs, err := ParseIPVSStats(out)
		if err != nil {
			return
		}
		for _, v := range vs {
			if v.Protocol == "" || v.Address == "" || v.Real == nil {
				t.Fatalf("virtual server %+v", v)
			}
		}
	})
}
