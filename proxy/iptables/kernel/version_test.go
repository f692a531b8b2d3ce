package kernel

import "testing"

func TestParseVersion(t *testing.T) {
	cases := []struct {
		out         string
		want        Version
		randomFully bool
	}{
		{"iptables v1.8.9 (nf_tables)\n", Version{1, 8, 9, ModeNFTables}, true},
		{"iptables v1.8.9 (legacy)\n", Version{1, 8, 9, ModeLegacy}, true},
		{"iptables v1.6.1\n", Version{1, 6, 1, ModeLegacy}, false},
		{"iptables v1.6.2\n", Version{1, 6, 2, ModeLegacy}, true},
		{"iptables v1.4\n", Version{1, 4, 0, ModeLegacy}, false},
	}
	for _, c := range cases {
		got, err := ParseVersion(c.out)
		if err != nil || got != c.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", c.out, got, err, c.want)
		}
		if got.HasRandomFully() != c.randomFully {
			t.Errorf("%v.HasRandomFully() = %v, want %v", got, got.HasRandomFully(), c.randomFully)
		}
	}
	for _, bad := range []string{"", "command not found", "iptables v1.8.9 (weird)"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) must fail", bad)
		}
	}
}

func TestBackendBinaries(t *testing.T) {
	cases := map[Backend][3]string{
		BackendHost:   {"iptables", "iptables-save", "iptables-restore"},
		BackendLegacy: {"iptables-legacy", "iptables-legacy-save", "iptables-legacy-restore"},
		BackendNFT:    {"iptables-nft", "iptables-nft-save", "iptables-nft-restore"},
	}
	for b, want := range cases {
		got := [3]string{b.binary("iptables"), b.binary("iptables-save"), b.binary("iptables-restore")}
		if got != want {
			t.Errorf("backend %q binaries = %v, want %v", b, got, want)
		}
	}
	for in, want := range map[string]Backend{"": BackendHost, "host": BackendHost, "iptables": BackendHost, "legacy": BackendLegacy, "nft": BackendNFT} {
		if got, err := ParseBackend(in); err != nil || got != want {
			t.Errorf("ParseBackend(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseBackend("ipvs"); err == nil {
		t.Error("ParseBackend(ipvs) must fail")
	}
}
