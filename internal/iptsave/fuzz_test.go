package iptsave

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParse: any text gives tables or one *Error, never a panic. What it
// gives is consistent (every rule of a chain its table declared, numbered
// 1, 2, ... within its chain, lines in order) and survives a round trip:
// written back as iptables-save would, it parses to the same tables. The
// seeds are the real iptables-save output in testdata and odd lines.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.save"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed corpus in testdata: %v", err)
	}
	for _, name := range files {
		f.Add(readTestdata(f, filepath.Base(name)))
	}
	f.Add("*nat\n:PREROUTING ACCEPT [5:300]\n:KUBE-X - [0:0]\n[3:180] -A PREROUTING -j KUBE-X\n[3:180] -A KUBE-X -j RETURN\nCOMMIT\n")
	f.Add("*filter\r\n:INPUT DROP\r\n\t[1:2]-A INPUT  -m comment --comment \"a \\\" b\"\r\nCOMMIT")
	f.Add("*nat\n:X - [18446744073709551615:0]\n-A X\n-X X\nCOMMIT\n")
	f.Fuzz(func(t *testing.T, text string) {
		tables, err := Parse(text)
		if err != nil {
			if _, isLineError := err.(*Error); !isLineError && len(text) <= MaxSize {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		checkConsistent(t, tables)
		again, err := Parse(format(tables))
		if err != nil {
			t.Fatalf("written back:\n%s\ndoes not parse: %v", format(tables), err)
		}
		if !slices.EqualFunc(withoutLines(again), withoutLines(tables), tablesEqual) {
			t.Fatalf("round trip:\n%+v\nbecame\n%+v", tables, again)
		}
	})
}

func checkConsistent(t *testing.T, tables []Table) {
	t.Helper()
	line := 0
	for _, tb := range tables {
		declared := map[string]bool{}
		for _, c := range tb.Chains {
			declared[c.Name] = true
		}
		count := map[string]int{}
		for _, r := range tb.Rules {
			count[r.Chain]++
			if !declared[r.Chain] || r.Index != count[r.Chain] || r.Line <= line {
				t.Fatalf("rule %+v: chain declared %v, index want %d, after line %d", r, declared[r.Chain], count[r.Chain], line)
			}
			line = r.Line
		}
	}
}

// format writes tables as iptables-save -c does.
func format(tables []Table) string {
	var b strings.Builder
	for _, t := range tables {
		b.WriteString("*" + t.Name + "\n")
		for _, c := range t.Chains {
			fmt.Fprintf(&b, ":%s %s [%d:%d]\n", c.Name, c.Policy, c.Counters.Packets, c.Counters.Bytes)
		}
		for _, r := range t.Rules {
			b.WriteString(r.String() + "\n")
		}
		b.WriteString("COMMIT\n")
	}
	return b.String()
}

func withoutLines(tables []Table) []Table {
	out := slices.Clone(tables)
	for i := range out {
		out[i].Chains = slices.Clone(out[i].Chains)
		for j := range out[i].Chains {
			out[i].Chains[j].Line = 0
		}
		out[i].Rules = slices.Clone(out[i].Rules)
		for j := range out[i].Rules {
			out[i].Rules[j].Line = 0
		}
	}
	return out
}

// FuzzFields: what Fields splits, Join writes back so that Fields splits
// it into the same arguments.
func FuzzFields(f *testing.F) {
	f.Add(`-m comment --comment "default/web:http \"cluster\" IP" -j KUBE-SVC-X`)
	f.Add(`"" a\b "one"two pre"in side"`)
	f.Fuzz(func(t *testing.T, spec string) {
		args, err := Fields(spec)
		if err != nil {
			return
		}
		again, err := Fields(Join(args))
		if err != nil || !slices.Equal(again, args) {
			t.Fatalf("Fields(%q) = %q; Join = %s; split again %q, %v", spec, args, Join(args), again, err)
		}
	})
}
