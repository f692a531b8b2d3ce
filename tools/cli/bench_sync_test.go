package cli

import (
	"slices"
	"strings"
	"testing"
)

// TestBenchSyncPassesItsFlagsOn: the flags given reach svclab-bench-sync
// as they were given, and --services left out is 0, the program's
// default for the mode (1000 for ipvs).
func TestBenchSyncPassesItsFlagsOn(t *testing.T) {
	cmd := parsed(t, "bench", "sync", "--mode", "ipvs", "--endpoints", "2", "--changes", "3", "--full-resyncs", "1", "-o", "json")
	f := cmd.Flags()
	mode, _ := f.GetString("mode")
	services, _ := f.GetInt("services")
	endpoints, _ := f.GetInt("endpoints")
	changes, _ := f.GetInt("changes")
	fullResyncs, _ := f.GetInt("full-resyncs")
	ipt, _ := f.GetString("iptables")
	output, _ := f.GetString("output")
	got := benchSyncArgs(mode, services, endpoints, changes, fullResyncs, ipt, output)
	want := []string{"--mode", "ipvs", "--services", "0", "--endpoints", "2", "--changes", "3", "--full-resyncs", "1", "--iptables", "", "-o", "json"}
	if !slices.Equal(got, want) {
		t.Errorf("args = %q, want %q", got, want)
	}
}

// TestBenchSyncHelpNamesIPVS: the help offers ipvs and says where it runs
// and what its times are worth.
func TestBenchSyncHelpNamesIPVS(t *testing.T) {
	out, err := run("bench", "sync", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"iptables|nftables|ipvs", "VM", "ratios only", "netlink"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not measured yet") {
		t.Errorf("help still says ipvs is not measured:\n%s", out)
	}
}

// TestBenchSyncWithoutTheProgramSaysHowToBuildIt: a missing
// svclab-bench-sync fails at once, naming make bench-sync.
func TestBenchSyncWithoutTheProgramSaysHowToBuildIt(t *testing.T) {
	_, err := run("bench", "sync", "--mode", "ipvs", "--program", t.TempDir()+"/none")
	if err == nil || !strings.Contains(err.Error(), "make bench-sync") {
		t.Errorf("error %v, want one naming make bench-sync", err)
	}
}
