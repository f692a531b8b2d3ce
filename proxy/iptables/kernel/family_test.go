package kernel

import (
	"os/exec"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestFamilyBinaries: an IPv6 runner runs the ip6tables tools of its
// backend; the zero family runs IPv4's.
func TestFamilyBinaries(t *testing.T) {
	cases := []struct {
		backend Backend
		family  corev1.IPFamily
		want    [3]string
	}{
		{BackendHost, "", [3]string{"iptables", "iptables-save", "iptables-restore"}},
		{BackendHost, corev1.IPv4Protocol, [3]string{"iptables", "iptables-save", "iptables-restore"}},
		{BackendHost, corev1.IPv6Protocol, [3]string{"ip6tables", "ip6tables-save", "ip6tables-restore"}},
		{BackendLegacy, corev1.IPv6Protocol, [3]string{"ip6tables-legacy", "ip6tables-legacy-save", "ip6tables-legacy-restore"}},
		{BackendNFT, corev1.IPv6Protocol, [3]string{"ip6tables-nft", "ip6tables-nft-save", "ip6tables-nft-restore"}},
	}
	for _, c := range cases {
		r := &ExecRunner{backend: c.backend, family: c.family}
		got := [3]string{r.binary("iptables"), r.binary("iptables-save"), r.binary("iptables-restore")}
		if got != c.want {
			t.Errorf("backend %q family %q binaries = %v, want %v", c.backend, c.family, got, c.want)
		}
	}
}

// TestNewExecRunnerIPv6 reads the version of each installed ip6tables
// backend through an IPv6 runner.
func TestNewExecRunnerIPv6(t *testing.T) {
	for backend, want := range map[Backend]Mode{BackendLegacy: ModeLegacy, BackendNFT: ModeNFTables} {
		if _, err := exec.LookPath("ip6tables-" + string(backend)); err != nil {
			t.Logf("ip6tables-%s not installed; not checked", backend)
			continue
		}
		r, err := NewExecRunner(ExecOptions{Backend: backend, Family: corev1.IPv6Protocol})
		if err != nil {
			t.Fatalf("NewExecRunner(%s, IPv6): %v", backend, err)
		}
		if r.Mode() != want || r.Family() != corev1.IPv6Protocol {
			t.Errorf("IPv6 runner of %s: mode %s family %s; want %s IPv6", backend, r.Mode(), r.Family(), want)
		}
	}
	if _, err := NewExecRunner(ExecOptions{Family: "IPv5"}); err == nil {
		t.Error("NewExecRunner with family IPv5 must fail")
	}
}
