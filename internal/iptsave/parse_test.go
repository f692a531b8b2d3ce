package iptsave

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The testdata are real iptables-save output:
//
//   - flannel-nat-counters.save: `iptables-save -c -t nat` of a one-node
//     flannel lab after 300 connections to a Service (as in tools/ui);
//   - canal-hosta-{nat,filter}.save: `iptables-save -c` of hosta in a canal
//     lab, from the capture of labs/netns/trace's nodeport-canal trace;
//   - nft-nat-no-counters.save: `iptables-nft-save -t nat` (no -c) of
//     kube-proxy's rules for one Service, as in proxy/iptables/iptablestest.
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestParseRealOutput reads each testdata file whole: its tables, chains,
// policies, rules, counters and specs, with rules numbered within their
// chains.
func TestParseRealOutput(t *testing.T) {
	tables, err := Parse(readTestdata(t, "flannel-nat-counters.save"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || tables[0].Name != "nat" {
		t.Fatalf("tables %+v", tables)
	}
	nat := tables[0]
	if c := nat.Chains[0]; c != (Chain{Name: "PREROUTING", Policy: "ACCEPT", Line: 3}) {
		t.Errorf("first chain %+v", c)
	}
	svc := nat.ChainRules("KUBE-SVC-2CMXP7HKUVJN7L6M")
	var toEndpoints uint64
	for i, r := range svc {
		if r.Index != i+1 || !r.HasCounters || r.Chain != "KUBE-SVC-2CMXP7HKUVJN7L6M" {
			t.Errorf("rule %d: %+v", i, r)
		}
		if strings.Contains(r.Spec, "-j KUBE-SEP-") {
			toEndpoints += r.Counters.Packets
		}
	}
	if toEndpoints != 300 {
		t.Errorf("the Service's endpoint rules counted %d packets, want 300", toEndpoints)
	}

	for _, tc := range []struct {
		file, table   string
		chains, rules int
		counters      bool
	}{
		{"canal-hosta-nat.save", "nat", 21, 46, true},
		{"canal-hosta-filter.save", "filter", 10, 18, true},
		{"nft-nat-no-counters.save", "nat", 7, 6, false},
	} {
		tables, err := Parse(readTestdata(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(tables) != 1 || tables[0].Name != tc.table || len(tables[0].Chains) != tc.chains || len(tables[0].Rules) != tc.rules {
			t.Errorf("%s: %d tables, the first %q with %d chains and %d rules; want %s with %d and %d",
				tc.file, len(tables), tables[0].Name, len(tables[0].Chains), len(tables[0].Rules), tc.table, tc.chains, tc.rules)
		}
		for _, r := range tables[0].Rules {
			if r.HasCounters != tc.counters {
				t.Errorf("%s line %d: HasCounters = %v", tc.file, r.Line, r.HasCounters)
			}
		}
	}
}

// TestParseFilterCounters: a built-in chain's policy counters and the
// rules' counters of the canal filter table, at their lines.
func TestParseFilterCounters(t *testing.T) {
	tables, err := Parse(readTestdata(t, "canal-hosta-filter.save"))
	if err != nil {
		t.Fatal(err)
	}
	filter := tables[0]
	if filter.Chains[0].Name != "INPUT" || filter.Chains[0].Policy != "ACCEPT" {
		t.Errorf("first chain %+v", filter.Chains[0])
	}
	forward := filter.ChainRules("FORWARD")
	want := Rule{Chain: "FORWARD", Index: 2, Counters: Counters{20, 1556}, HasCounters: true,
		Spec: `-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD`, Line: 18}
	if len(forward) != 5 || forward[1] != want {
		t.Errorf("FORWARD's rules %+v, want the second %+v", forward, want)
	}
	if got := forward[1].String(); got != `[20:1556] -A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD` {
		t.Errorf("String() = %s", got)
	}
}

// TestParseSeveralTables: tables in order, each with its own chains; blank
// lines, comments and CRLF line ends are skipped.
func TestParseSeveralTables(t *testing.T) {
	text := "# a comment\r\n*filter\r\n:INPUT DROP [1:2]\r\n\r\n[3:4] -A INPUT -j ACCEPT\r\nCOMMIT\r\n*nat\n:X - [0:0]\n-A X\n-A X -j RETURN\nCOMMIT"
	tables, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Table{
		{Name: "filter", Chains: []Chain{{Name: "INPUT", Policy: "DROP", Counters: Counters{1, 2}, Line: 3}},
			Rules: []Rule{{Chain: "INPUT", Index: 1, Counters: Counters{3, 4}, HasCounters: true, Spec: "-j ACCEPT", Line: 5}}},
		{Name: "nat", Chains: []Chain{{Name: "X", Policy: "-", Line: 8}},
			Rules: []Rule{{Chain: "X", Index: 1, Line: 9}, {Chain: "X", Index: 2, Spec: "-j RETURN", Line: 10}}},
	}
	if !slices.EqualFunc(tables, want, tablesEqual) {
		t.Errorf("Parse =\n%+v, want\n%+v", tables, want)
	}
	if empty, err := Parse(""); err != nil || len(empty) != 0 {
		t.Errorf("Parse(\"\") = %+v, %v", empty, err)
	}
}

func tablesEqual(a, b Table) bool {
	return a.Name == b.Name && slices.Equal(a.Chains, b.Chains) && slices.Equal(a.Rules, b.Rules)
}

// TestParseRefuses: what iptables-save never writes is one *Error naming
// its line.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
		want     string
	}{
		{"rule outside a table", "[1:2] -A X -j Y\n", 1, "command outside a table"},
		{"chain outside a table", ":X - [0:0]\n", 1, "chain declaration outside a table"},
		{"COMMIT outside a table", "*nat\nCOMMIT\nCOMMIT\n", 3, "COMMIT outside a table"},
		{"undeclared chain", "*nat\n[1:2] -A X -j Y\nCOMMIT\n", 2, "undeclared chain X"},
		{"chain of another table", "*filter\n:X - [0:0]\nCOMMIT\n*nat\n-A X\nCOMMIT\n", 5, "undeclared chain X"},
		{"bad counters", "*nat\n:X - [a:b]\nCOMMIT\n", 2, "packets"},
		{"no COMMIT", "*nat\n:X - [0:0]\n", 3, "table nat has no COMMIT"},
		{"no COMMIT nor newline", "*nat\n:X - [0:0]", 3, "table nat has no COMMIT"},
		{"table inside a table", "*nat\n*filter\nCOMMIT\n", 2, "table filter begins before nat's COMMIT"},
		{"table twice", "*nat\nCOMMIT\n*nat\nCOMMIT\n", 3, "table nat twice"},
		{"chain twice", "*nat\n:X - [0:0]\n:X - [0:0]\nCOMMIT\n", 3, "chain X declared twice"},
		{"insert", "*nat\n:X - [0:0]\n[1:2] -I X -j ACCEPT\nCOMMIT\n", 3, "want -A CHAIN"},
		{"delete chain", "*nat\n:X - [0:0]\n-X X\nCOMMIT\n", 3, "want -A CHAIN"},
		{"no chain", "*nat\n-A\nCOMMIT\n", 2, "want -A CHAIN"},
		{"not iptables-save", "*nat\n:X - [0:0]\nhello world\n", 3, "want *TABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in)
			var e *Error
			if !errors.As(err, &e) || e.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) = %v, want an *Error at line %d with %q", tc.in, err, tc.line, tc.want)
			}
		})
	}
}

// TestScan numbers the lines it hands on, sets their table, and stops at
// the first error its callback returns, at that line.
func TestScan(t *testing.T) {
	var got []Line
	err := Scan("# c\n*nat\n:X - [0:0]\n-X X\nCOMMIT\n*filter\nCOMMIT\n", func(l Line) error {
		got = append(got, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Line{
		{Number: 2, Kind: TableHeader, Table: "nat"},
		{Number: 3, Kind: ChainDeclaration, Table: "nat", Chain: "X", Policy: "-", HasCounters: true},
		{Number: 4, Kind: Command, Table: "nat", Op: "-X", Chain: "X"},
		{Number: 5, Kind: Commit, Table: "nat"},
		{Number: 6, Kind: TableHeader, Table: "filter"},
		{Number: 7, Kind: Commit, Table: "filter"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Scan gave\n%+v, want\n%+v", got, want)
	}

	stop := errors.New("no jumps here")
	err = Scan("*nat\n:X - [0:0]\nCOMMIT\n", func(l Line) error {
		if l.Kind == Commit {
			return stop
		}
		return nil
	})
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 || !errors.Is(err, stop) {
		t.Errorf("Scan = %v, want the callback's error at line 3", err)
	}
}

// TestParseBoundsItsInput: a text longer than MaxSize is refused before
// it is read.
func TestParseBoundsItsInput(t *testing.T) {
	big := strings.Repeat("#\n", MaxSize/2+1)
	if _, err := Parse(big); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("Parse of %d bytes: %v", len(big), err)
	}
}

// TestChainNames lists declared chains in order and skips everything else,
// malformed declarations too.
func TestChainNames(t *testing.T) {
	text := "*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n: broken\n:KUBE-X - [bad]\n-A KUBE-SERVICES -j RETURN\n  :KUBE-MARK-MASQ - [0:0]\nCOMMIT\n"
	want := []string{"PREROUTING", "KUBE-SERVICES", "KUBE-MARK-MASQ"}
	if got := ChainNames(text); !slices.Equal(got, want) {
		t.Errorf("ChainNames = %q, want %q", got, want)
	}
}
