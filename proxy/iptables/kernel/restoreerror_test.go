package kernel

import (
	"errors"
	"fmt"
	"testing"
)

func TestNewRestoreErrorFindsTheBlamedLine(t *testing.T) {
	payload := []byte("*nat\n:KUBE-X - [0:0]\n-A KUBE-X -j KUBE-MISSING\nCOMMIT\n")
	cases := []struct {
		name, output string
		line         int
		offending    string
	}{
		{"legacy parse error", "iptables-restore v1.8.9 (legacy): Couldn't load target `KUBE-MISSING':No such file or directory\n\nError occurred at line: 3\nTry `iptables-restore -h' or 'iptables-restore --help' for more information.\n", 3, "-A KUBE-X -j KUBE-MISSING"},
		{"nft reports at COMMIT", "iptables-nft-restore v1.8.9 (nf_tables): Chain 'KUBE-MISSING' does not exist\nError occurred at line: 4\n", 4, "COMMIT"},
		{"line failed (legacy)", "iptables-restore: line 2 failed\n", 2, ":KUBE-X - [0:0]"},
		{"line failed (nft, with reason)", "iptables-nft-restore: line 3 failed: No chain/target/match by that name.\n", 3, "-A KUBE-X -j KUBE-MISSING"},
		{"missing COMMIT", "iptables-restore: COMMIT expected at line 5\n", 5, ""},
		{"no line", "iptables-restore: unable to initialize table 'nat'\n", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cause := errors.New("exit status 1")
			e := NewRestoreError("iptables-restore", []byte(c.output), payload, cause)
			if e.Line != c.line || e.OffendingLine() != c.offending {
				t.Errorf("Line=%d OffendingLine=%q, want %d %q", e.Line, e.OffendingLine(), c.line, c.offending)
			}
			wrapped := fmt.Errorf("sync: %w", e)
			if !IsRestoreError(wrapped) || !errors.Is(wrapped, cause) {
				t.Error("the error must be found through wrapping and unwrap to its cause")
			}
		})
	}
	if IsRestoreError(errors.New("other")) {
		t.Error("IsRestoreError(other) = true")
	}
}

func TestRestoreErrorMessageNamesCommandLineAndText(t *testing.T) {
	payload := []byte("*nat\n:KUBE-X - [0:0]\n-A KUBE-X -j KUBE-MISSING\nCOMMIT\n")
	e := NewRestoreError("iptables-legacy-restore", []byte("iptables-restore v1.8.9 (legacy): Couldn't load target `KUBE-MISSING'\nError occurred at line: 3\n"), payload, nil)
	want := "iptables-legacy-restore rejected payload line 3 \"-A KUBE-X -j KUBE-MISSING\": iptables-restore v1.8.9 (legacy): Couldn't load target `KUBE-MISSING'"
	if e.Error() != want {
		t.Errorf("Error() =\n%s\nwant\n%s", e.Error(), want)
	}
	if len(e.Context) != 4 || e.Context[0].Number != 1 || e.Context[3].Number != 4 {
		t.Errorf("Context = %+v, want lines 1..4 (two either side, clipped)", e.Context)
	}
}

func TestExtractLines(t *testing.T) {
	data := []byte("a\nb\nc\nd\ne\nf\n")
	got := ExtractLines(data, 4, 1)
	want := []PayloadLine{{3, "c"}, {4, "d"}, {5, "e"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ExtractLines = %v, want %v", got, want)
	}
	if ExtractLines(data, 0, 1) != nil {
		t.Error("line 0 must give nothing")
	}
}
