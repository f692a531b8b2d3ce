package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// dumpEnv names a directory to write each case's two tables into
// (NAME.upstream, NAME.svclab), for reading them side by side.
const dumpEnv = "SVCLAB_UPSTREAM_DUMP"

// TestIPTablesMatchesUpstream runs every corpus case through upstream's
// proxier and svclab's renderer and compares the whole filter and nat
// tables. A case with expectedDifference must differ (and says why).
func TestIPTablesMatchesUpstream(t *testing.T) {
	requireNetns(t)
	cases, err := LoadCorpus("testdata/iptables")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Errorf("corpus has %d cases, want at least 40", len(cases))
	}
	for _, c := range cases {
		runFamilies(t, c, func(t *testing.T, c *Case) {
			want, got, log := compareCase(t, c)
			switch {
			case c.ExpectedDifference == "" && want != got:
				t.Errorf("svclab's tables differ from upstream kube-proxy's (-upstream +svclab):\n%s", UnifiedDiff(want, got))
			case c.ExpectedDifference != "" && want == got:
				t.Errorf("expected a documented difference (%s), but the tables are equal: remove expectedDifference", c.ExpectedDifference)
			case c.ExpectedDifference != "":
				t.Logf("documented difference: %s\n%s", c.ExpectedDifference, UnifiedDiff(want, got))
			}
			if t.Failed() && testing.Verbose() {
				t.Logf("upstream log:\n%s", log)
			}
		})
	}
}

func compareCase(t *testing.T, c *Case) (want, got, log string) {
	t.Helper()
	up, log, err := UpstreamTables(c)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := SvclabTables(c)
	if err != nil {
		t.Fatal(err)
	}
	if want, err = Save(up); err != nil {
		t.Fatal(err)
	}
	if got, err = Save(ours); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv(dumpEnv); dir != "" {
		base := c.Name + familySuffix(c)
		for name, text := range map[string]string{base + ".upstream": want, base + ".svclab": got, base + ".log": log} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !strings.Contains(want, "KUBE-SERVICES") {
		t.Fatalf("upstream's tables have no KUBE-SERVICES chain; did it sync?\n%s\nlog:\n%s", want, log)
	}
	return want, got, log
}

// runFamilies runs compare on each family of c (Case.Families), with the
// options narrowed to it: a one-family case as the subtest NAME, a
// dual-stack one as NAME/IPv4 and NAME/IPv6.
func runFamilies(t *testing.T, c *Case, compare func(*testing.T, *Case)) {
	t.Run(c.Name, func(t *testing.T) {
		families := c.Families()
		if len(families) == 1 {
			compare(t, c.ForFamily(families[0]))
			return
		}
		for _, f := range families {
			t.Run(string(f), func(t *testing.T) { compare(t, c.ForFamily(f)) })
		}
	})
}

// familySuffix names the family in dump files: none for IPv4, ".ipv6".
func familySuffix(c *Case) string {
	if c.Options.Family == corev1.IPv6Protocol {
		return ".ipv6"
	}
	return ""
}
