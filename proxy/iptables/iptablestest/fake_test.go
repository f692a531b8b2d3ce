package iptablestest

import (
	"errors"
	"strings"
	"testing"

	"github.com/svclab/svclab/proxy/iptables/kernel"
)

func restoreError(t *testing.T, err error) *kernel.RestoreError {
	t.Helper()
	var re *kernel.RestoreError
	if !errors.As(err, &re) {
		t.Fatalf("want an *kernel.RestoreError, got %T: %v", err, err)
	}
	return re
}

func TestFakeRestoreAppliesNoFlushSemantics(t *testing.T) {
	f := NewFakeRunner()
	first := "*nat\n:KUBE-A - [0:0]\n:KUBE-B - [0:0]\n-A KUBE-A -j KUBE-B\n-A KUBE-B -j RETURN\nCOMMIT\n"
	if err := f.Restore([]byte(first)); err != nil {
		t.Fatal(err)
	}
	// Redeclaring KUBE-A flushes it; KUBE-B, not mentioned, is kept.
	second := "*nat\n:KUBE-A - [0:0]\n-A KUBE-A -j ACCEPT\nCOMMIT\n"
	if err := f.Restore([]byte(second)); err != nil {
		t.Fatal(err)
	}
	a, b := f.Dump().Chain("nat", "KUBE-A"), f.Dump().Chain("nat", "KUBE-B")
	if len(a.Rules) != 1 || a.Rules[0].Jump != "ACCEPT" {
		t.Errorf("KUBE-A = %v, want only the new ACCEPT rule", a.Rules)
	}
	if b == nil || len(b.Rules) != 1 {
		t.Errorf("KUBE-B must be kept with its rule, got %v", b)
	}
	if f.Dump().Chain("filter", "INPUT") == nil {
		t.Error("filter table must be untouched")
	}
}

func TestFakeRestoreRejectsWhatTheKernelRejects(t *testing.T) {
	cases := []struct {
		name, payload string
		line          int
		message       string
	}{
		{"jump to a missing chain", "*nat\n:KUBE-A - [0:0]\n-A KUBE-A -j KUBE-MISSING\nCOMMIT\n", 4, "KUBE-MISSING"},
		{"rule in an undeclared chain", "*nat\n-A KUBE-NOWHERE -j ACCEPT\nCOMMIT\n", 2, "KUBE-NOWHERE"},
		{"missing COMMIT", "*nat\n:KUBE-A - [0:0]\n", 3, "COMMIT"},
		{"new table before COMMIT", "*nat\n:KUBE-A - [0:0]\n*filter\nCOMMIT\n", 3, "COMMIT"},
		{"DNAT in filter", "*filter\n:KUBE-A - [0:0]\n-A KUBE-A -j DNAT --to-destination 1.2.3.4:80\nCOMMIT\n", 4, "DNAT"},
		{"unknown option", "*nat\n:KUBE-A - [0:0]\n-A KUBE-A --bogus -j ACCEPT\nCOMMIT\n", 3, "--bogus"},
		{"chain name too long", "*nat\n:KUBE-THIS-NAME-IS-MUCH-TOO-LONG-X - [0:0]\nCOMMIT\n", 2, "longer"},
		{"delete a referenced chain", "*nat\n:KUBE-A - [0:0]\n:KUBE-B - [0:0]\n-A KUBE-A -j KUBE-B\n-X KUBE-B\nCOMMIT\n", 5, "referenced"},
		{"delete a built-in chain", "*nat\n-X PREROUTING\nCOMMIT\n", 2, "built-in"},
		{"unterminated quote", "*nat\n:KUBE-A - [0:0]\n-A KUBE-A -m comment --comment \"oops -j ACCEPT\nCOMMIT\n", 3, "quote"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := NewFakeRunner()
			before, _ := f.Save("nat")
			re := restoreError(t, f.Restore([]byte(c.payload)))
			if re.Line != c.line {
				t.Errorf("Line = %d, want %d (%v)", re.Line, c.line, re)
			}
			if !strings.Contains(re.Error(), c.message) {
				t.Errorf("error %q does not mention %q", re.Error(), c.message)
			}
			if !kernel.IsRestoreError(re) {
				t.Error("IsRestoreError = false")
			}
			after, _ := f.Save("nat")
			if string(before) != string(after) {
				t.Errorf("a rejected table must stay as it was:\n%s", after)
			}
		})
	}
}

func TestFakeRestoreCommitsTablesOneByOne(t *testing.T) {
	// Like both real backends: filter is committed before nat fails.
	f := NewFakeRunner()
	payload := "*filter\n:KUBE-F - [0:0]\nCOMMIT\n*nat\n:KUBE-N - [0:0]\n-A KUBE-N -j KUBE-MISSING\nCOMMIT\n"
	if err := f.Restore([]byte(payload)); err == nil {
		t.Fatal("want an error")
	}
	if f.Dump().Chain("filter", "KUBE-F") == nil {
		t.Error("filter section before the failing table must be committed")
	}
	if f.Dump().Chain("nat", "KUBE-N") != nil {
		t.Error("the failing nat section must not be committed")
	}
	if len(f.Restores) != 1 {
		t.Errorf("Restores records %d payloads, want 1", len(f.Restores))
	}
}

func TestFakeRestoreDeletesFlushedChains(t *testing.T) {
	f := NewFakeRunner()
	if err := f.Restore([]byte("*nat\n:KUBE-A - [0:0]\n:KUBE-B - [0:0]\n-A KUBE-A -j KUBE-B\n-A KUBE-B -j RETURN\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	// Upstream's way of deleting: declare (flush) both, then -X.
	if err := f.Restore([]byte("*nat\n:KUBE-A - [0:0]\n:KUBE-B - [0:0]\n-X KUBE-A\n-X KUBE-B\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	if f.Dump().Chain("nat", "KUBE-A") != nil || f.Dump().Chain("nat", "KUBE-B") != nil {
		t.Error("chains must be gone")
	}
}

func TestFakeEnsureJumpIsIdempotentAndPrepends(t *testing.T) {
	f := NewFakeRunner()
	if err := f.Restore([]byte("*nat\n-A PREROUTING -j ACCEPT\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	j := kernel.JumpRule{Table: "nat", Chain: "PREROUTING", Target: "KUBE-SERVICES", Comment: "kubernetes service portals"}
	for range 2 {
		if err := f.EnsureJump(j); err != nil {
			t.Fatal(err)
		}
	}
	rules := f.Dump().Chain("nat", "PREROUTING").Rules
	if len(rules) != 2 || rules[0].Jump != "KUBE-SERVICES" {
		t.Fatalf("PREROUTING = %v, want the jump first and only once", rules)
	}
	if f.Dump().Chain("nat", "KUBE-SERVICES") == nil {
		t.Error("EnsureJump must create the target chain")
	}
	save, _ := f.Save("nat")
	if !strings.Contains(string(save), `-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`) {
		t.Errorf("save output:\n%s", save)
	}
	if err := f.EnsureJump(kernel.JumpRule{Table: "nat", Chain: "KUBE-SERVICES", Target: "X"}); err == nil {
		t.Error("EnsureJump into a non-built-in chain must fail")
	}
}

func TestFakeFailRestore(t *testing.T) {
	f := NewFakeRunner()
	f.FailRestore = errors.New("injected")
	if err := f.Restore([]byte("*nat\nCOMMIT\n")); err == nil || err.Error() != "injected" {
		t.Errorf("err = %v, want the injected error", err)
	}
}

func TestParseSaveReadsRealIPTablesSaveOutput(t *testing.T) {
	// As iptables-nft-save 1.8.9 prints kube-proxy's rules (normalised
	// forms: /32, 11-digit probabilities, hex marks, recent's defaults).
	save := `# Generated by iptables-nft-save v1.8.9 on Mon Nov 23 05:58:20 2026
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SEP-AAAAAAAAAAAAAAAA - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-BBBBBBBBBBBBBBBB - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SEP-AAAAAAAAAAAAAAAA -s 10.244.1.1/32 -m comment --comment default/web:http -j KUBE-MARK-MASQ
-A KUBE-SEP-AAAAAAAAAAAAAAAA -p tcp -m comment --comment default/web:http -m recent --set --name KUBE-SEP-AAAAAAAAAAAAAAAA --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.244.1.1:8080
-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-BBBBBBBBBBBBBBBB
-A KUBE-SVC-BBBBBBBBBBBBBBBB -m comment --comment "default/web:http -> 10.244.1.1:8080" -m recent --rcheck --seconds 600 --reap --name KUBE-SEP-AAAAAAAAAAAAAAAA --mask 255.255.255.255 --rsource -j KUBE-SEP-AAAAAAAAAAAAAAAA
-A KUBE-SVC-BBBBBBBBBBBBBBBB -m comment --comment "default/web:http -> 10.244.1.1:8080" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-AAAAAAAAAAAAAAAA
COMMIT
`
	d, err := ParseSave([]byte(strings.Replace(save, ":KUBE-SERVICES - [0:0]\n", ":KUBE-SERVICES - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	svc := d.Chain("nat", "KUBE-SVC-BBBBBBBBBBBBBBBB")
	if svc == nil || len(svc.Rules) != 2 {
		t.Fatalf("KUBE-SVC chain = %+v", svc)
	}
	if p := svc.Rules[1].Probability; p != "0.50000000000" {
		t.Errorf("probability = %q", p)
	}
	if !svc.Rules[0].RecentCheck || svc.Rules[0].RecentSecs != "600" {
		t.Errorf("recent check not parsed: %+v", svc.Rules[0])
	}
	rule := d.Chain("nat", "KUBE-SERVICES").Rules[0]
	if rule.Destination.Value != "10.96.0.20/32" || rule.DestinationPort.Value != "80" || rule.Comment != "default/web:http cluster IP" {
		t.Errorf("KUBE-SERVICES rule parsed as %+v", rule)
	}
}

// TestRestoreKeepsQuotedArguments: a quoted comment is one argument,
// its blanks kept, and Save writes it back quoted.
func TestRestoreKeepsQuotedArguments(t *testing.T) {
	f := NewFakeRunner()
	if err := f.Restore([]byte("*nat\n:X - [0:0]\n-A X -m comment --comment \"a b  c\" -j RETURN\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	r := f.Dump().Chain("nat", "X").Rules[0]
	want := []string{"-m", "comment", "--comment", "a b  c", "-j", "RETURN"}
	if r.Comment != "a b  c" || strings.Join(r.Args, "|") != strings.Join(want, "|") {
		t.Errorf("rule %+v, want the args %q", r, want)
	}
	if got := r.String(); got != `-A X -m comment --comment "a b  c" -j RETURN` {
		t.Errorf("String() = %s", got)
	}
}
