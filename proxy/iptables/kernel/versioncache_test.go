package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeIPTables puts iptables-nft, -save and -restore first in PATH: the
// first answers --version as iptables 1.8.9 in nf_tables mode and logs
// each run; the returned func counts the runs so far.
func fakeIPTables(t *testing.T, dir string) func() int {
	t.Helper()
	log := filepath.Join(dir, "runs")
	for name, script := range map[string]string{
		"iptables-nft":         fmt.Sprintf("#!/bin/sh\necho \"$*\" >>%s\necho 'iptables v1.8.9 (nf_tables)'\n", log),
		"iptables-nft-save":    "#!/bin/sh\nexit 0\n",
		"iptables-nft-restore": "#!/bin/sh\nexit 0\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return func() int {
		data, err := os.ReadFile(log)
		if os.IsNotExist(err) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(data), "\n")
	}
}

// TestVersionReadOncePerBinary: runners of one binary ask its version
// once (a proxy's family check and its backend each build one); a binary
// at another path is asked again.
func TestVersionReadOncePerBinary(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	runsFirst, runsSecond := fakeIPTables(t, first), fakeIPTables(t, second)
	t.Setenv("PATH", first+string(os.PathListSeparator)+os.Getenv("PATH"))
	for range 3 {
		r, err := NewExecRunner(ExecOptions{Backend: BackendNFT})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Version().String(); !strings.Contains(got, "1.8.9") || r.Mode() != ModeNFTables {
			t.Fatalf("Version = %s, mode %s; want 1.8.9, nf_tables", got, r.Mode())
		}
	}
	if n := runsFirst(); n != 1 {
		t.Errorf("three runners ran iptables-nft --version %d times, want 1", n)
	}

	t.Setenv("PATH", second+string(os.PathListSeparator)+os.Getenv("PATH"))
	if _, err := NewExecRunner(ExecOptions{Backend: BackendNFT}); err != nil {
		t.Fatal(err)
	}
	if n := runsSecond(); n != 1 {
		t.Errorf("a binary at another path ran --version %d times, want 1", n)
	}
}
