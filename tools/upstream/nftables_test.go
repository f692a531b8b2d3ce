package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nftCorpusDirs are the nftables comparison's cases: the shared corpus
// (issue 8's, also compared in iptables mode) and the cases only nftables
// mode reads (ServiceCIDRs).
var nftCorpusDirs = []string{"testdata/iptables", "testdata/nftables"}

// TestNFTablesMatchesUpstream runs every corpus case through upstream's
// nftables proxier and svclab's nftables renderer, each into its own
// knftables.Fake, and compares the whole Dump() (after NormalizeNFTDump).
// A case with expectedNFTablesDifference must differ (and says why).
func TestNFTablesMatchesUpstream(t *testing.T) {
	requireNetns(t)
	var cases []*Case
	for _, dir := range nftCorpusDirs {
		cs, err := LoadCorpus(dir)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, cs...)
	}
	if len(cases) < 70 {
		t.Errorf("corpus has %d cases, want at least 70", len(cases))
	}
	for _, c := range cases {
		runFamilies(t, c, func(t *testing.T, c *Case) {
			want, got, log := compareNFTCase(t, c)
			switch {
			case c.ExpectedNFTablesDifference == "" && want != got:
				t.Errorf("svclab's nftables table differs from upstream kube-proxy's (-upstream +svclab):\n%s", UnifiedDiff(want, got))
			case c.ExpectedNFTablesDifference != "" && want == got:
				t.Errorf("expected a documented difference (%s), but the tables are equal: remove expectedNFTablesDifference", c.ExpectedNFTablesDifference)
			case c.ExpectedNFTablesDifference != "":
				t.Logf("documented difference: %s\n%s", c.ExpectedNFTablesDifference, UnifiedDiff(want, got))
			}
			if t.Failed() && testing.Verbose() {
				t.Logf("upstream log:\n%s", log)
			}
		})
	}
}

func compareNFTCase(t *testing.T, c *Case) (want, got, log string) {
	t.Helper()
	up, log, err := UpstreamNFTables(c)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := SvclabNFTables(c)
	if err != nil {
		t.Fatal(err)
	}
	want, got = NormalizeNFTDump(up.Dump()), NormalizeNFTDump(ours.Dump())
	if want != got {
		want = someUpstreamRunEqual(t, c, want, got)
	}
	if dir := os.Getenv(dumpEnv); dir != "" {
		base := c.Name + familySuffix(c)
		for name, text := range map[string]string{base + ".nft.upstream": want, base + ".nft.svclab": got, base + ".nft.log": log} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !strings.Contains(want, "add chain "+string(nftFamily(c.Options))+" kube-proxy services") {
		t.Fatalf("upstream's table has no services chain; did it sync?\n%s\nlog:\n%s", want, log)
	}
	return want, got, log
}

// upstreamNFTRuns bounds how often a case whose tables differ runs
// upstream's nftables proxier again. Upstream walks its service map in Go's
// random order, so when two service ports claim one set or map key (one
// external IP, protocol and port on two Services) the element it leaves —
// value and comment — is whichever its walk reached last, and changes from
// run to run; svclab keeps the later service in snapshot order. svclab's
// table must be one that upstream leaves: with two claimants one run in
// two is, and 32 runs miss it once in four billion.
const upstreamNFTRuns = 32

// someUpstreamRunEqual runs upstream again until its table equals got and
// returns that table, or the first one when no run does.
func someUpstreamRunEqual(t *testing.T, c *Case, first, got string) string {
	t.Helper()
	for range upstreamNFTRuns {
		up, _, err := UpstreamNFTables(c)
		if err != nil {
			t.Fatal(err)
		}
		if again := NormalizeNFTDump(up.Dump()); again == got {
			return again
		}
	}
	return first
}
