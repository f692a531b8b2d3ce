package iptsave

import (
	"slices"
	"strings"
	"testing"
)

// TestFields splits specs as iptables-restore does.
func TestFields(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"-j RETURN", []string{"-j", "RETURN"}},
		{" \t-j\t RETURN ", []string{"-j", "RETURN"}},
		{`-m comment --comment "a b  c" -j Y`, []string{"-m", "comment", "--comment", "a b  c", "-j", "Y"}},
		{`--comment "ns/a:p \"q\" x"`, []string{"--comment", `ns/a:p "q" x`}},
		{`--comment "back\\slash"`, []string{"--comment", `back\slash`}},
		{`--comment ""`, []string{"--comment", ""}},
		{`--regex a\b`, []string{"--regex", `a\b`}},
		{`pre"in side"`, []string{"prein side"}},
		{`"one"two`, []string{"one", "two"}},
	} {
		got, err := Fields(tc.in)
		if err != nil || !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("Fields(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := Fields(`--comment "oops -j ACCEPT`); err == nil || !strings.Contains(err.Error(), "quote") {
		t.Errorf("unterminated quote: %v", err)
	}
}

// TestJoin writes what Fields reads back, quoting like iptables-save.
func TestJoin(t *testing.T) {
	args := []string{"-m", "comment", "--comment", `default/web:http "cluster" IP`, "", `a\b`, "tab\there", "-j", "KUBE-SVC-X"}
	got := Join(args)
	want := `-m comment --comment "default/web:http \"cluster\" IP" "" a\b "tab` + "\t" + `here" -j KUBE-SVC-X`
	if got != want {
		t.Errorf("Join = %s, want %s", got, want)
	}
	back, err := Fields(got)
	if err != nil || !slices.Equal(back, args) {
		t.Errorf("Fields(Join(args)) = %q, %v; want %q", back, err, args)
	}
}
