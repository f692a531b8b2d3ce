package conformance

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/scenarios/kit"
)

// dualClusterCIDR is a dual-stack ClusterCIDR configuration, IPv4 first.
var dualClusterCIDR = cfg(func(c *kit.ProxyConfig) { c.ClusterCIDRs = []string{"10.244.0.0/16", "fd00:10:244::/56"} })

// TestIPv6MasqueradeAsIP6TablesSavePrintsIt: the IPv6 proxier's
// masquerade rule (the IPv6 cluster CIDR, the address as a /128) is the
// line ip6tables-save printed in a test network namespace
// (kit/testdata/ip6tables-save-nat.txt), and the checks of the KUBE-SVC
// and KUBE-SEP chains accept that save.
func TestIPv6MasqueradeAsIP6TablesSavePrintsIt(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "kit", "testdata", "ip6tables-save-nat.txt"))
	if err != nil {
		t.Fatal(err)
	}
	save := string(data)
	ip := netip.MustParseAddr("fd00:10:96::a")
	m := expectedMasquerade(dualClusterCIDR, node1, corev1.IPv6Protocol)
	want := `! -s fd00:10:244::/56 -d fd00:10:96::a/128 -p tcp -m comment --comment "default/web cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`
	if got := m.iptablesRule(ip, 80, "default/web"); got != want {
		t.Errorf("iptablesRule:\n got %s\nwant %s", got, want)
	}
	if problem := iptablesMasqueradeProblem(kit.Rules(save, "KUBE-SVC-X"), ip, "default/web", m); problem != "" {
		t.Errorf("the captured KUBE-SVC chain: %s", problem)
	}
	if v4 := expectedMasquerade(dualClusterCIDR, node1, corev1.IPv4Protocol); v4.NotLocal[2] != "10.244.0.0/16" || v4.nftMatch() != "ip saddr != 10.244.0.0/16" {
		t.Errorf("IPv4 of a dual-stack configuration: %+v", v4)
	}
	if got := m.nftMatch(); got != "ip6 saddr != fd00:10:244::/56" {
		t.Errorf("nftMatch %q", got)
	}
	// The KUBE-SEP rules expectIPTablesService wants, as the save has them.
	pod := netip.MustParseAddr("fd00:10:244:1::5")
	sep := kit.Rules(save, "KUBE-SEP-A")
	if len(sep) != 2 || sep[0].Spec != `-s fd00:10:244:1::5/128 -m comment --comment "default/web" -j KUBE-MARK-MASQ` ||
		sep[1].Spec != `-p tcp -m comment --comment "default/web" -m tcp -j DNAT --to-destination `+netip.AddrPortFrom(pod, 8080).String() {
		t.Errorf("KUBE-SEP-A: %+v", sep)
	}
	if hostLen("fd00:10:96::a") != 128 || hostLen("10.96.0.10") != 32 {
		t.Error("hostLen")
	}
	if c := kit.Rules(save, "KUBE-SVC-X"); c[1].Packets != 3 || c[2].Packets != 0 {
		t.Errorf("counters of KUBE-SVC-X: %+v", c)
	}
}

// TestNFTIPv6Listing: the service checks read `nft -j list table ip6
// kube-proxy` (testdata/nft/numgen-map-ip6.json, the listing of
// numgen-map-ip6.nft) as the IPv4 table's.
func TestNFTIPv6Listing(t *testing.T) {
	checkNFTIPv6Listing(t, readNFTListing(t, "numgen-map-ip6"))
}

func checkNFTIPv6Listing(t *testing.T, table string) {
	t.Helper()
	two := nftService("two")
	two.Spec.ClusterIP = "fd00:10:96::14"
	pods := nftPods("fd00:10:244:1::5", "fd00:10:244:2::6")
	if problem := nftServiceProblem(table, two, pods, 8080); problem != "" {
		t.Errorf("default/two: %s", problem)
	}
	if problem := nftServiceProblem(table, two, nftPods("fd00:10:244:1::5", "fd00:10:244:2::9"), 8080); !strings.Contains(problem, "does not DNAT to pod") {
		t.Errorf("a pod the map does not lead to: problem %q", problem)
	}
	if problem := nftMasqueradeProblem(table, two, expectedMasquerade(dualClusterCIDR, node1, corev1.IPv6Protocol)); problem != "" {
		t.Errorf("masquerade: %s", problem)
	}
	masqAll := expectedMasquerade(cfg(func(c *kit.ProxyConfig) { c.MasqueradeAll = true }), node1, corev1.IPv6Protocol)
	if problem := nftMasqueradeProblem(table, two, masqAll); problem == "" {
		t.Error("masqueradeAll accepted a rule with a not-local match")
	}
}

// TestIntegrationNFTIPv6Listing loads numgen-map-ip6.nft into a scratch
// namespace and checks the live `nft -j list table ip6 kube-proxy`.
func TestIntegrationNFTIPv6Listing(t *testing.T) {
	roottest.Require(t, "creates a network namespace and loads nftables rules into it")
	if err := hostprog.Check(hostprog.NFT); err != nil {
		t.Fatal(err)
	}
	ns := roottest.Netns(t, "svclab-nft6")
	rules := filepath.Join("testdata", "nft", "numgen-map-ip6.nft")
	if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-f", rules).CombinedOutput(); err != nil {
		t.Fatalf("nft -f %s: %v: %s", rules, err, out)
	}
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-j", "list", "table", "ip6", "kube-proxy").Output()
	if err != nil {
		t.Fatalf("nft -j list table ip6 kube-proxy: %v", err)
	}
	checkNFTIPv6Listing(t, string(out))
}

// TestIntegrationIP6TablesMasqueradeRule writes the IPv6 masquerade rule
// as upstream's iptables proxier does into a scratch namespace with
// ip6tables-restore, and checks that ip6tables-save prints it as
// iptablesRule says.
func TestIntegrationIP6TablesMasqueradeRule(t *testing.T) {
	roottest.Require(t, "creates a network namespace and loads ip6tables rules into it")
	ns := roottest.Netns(t, "svclab-ip6masq")
	m := expectedMasquerade(dualClusterCIDR, node1, corev1.IPv6Protocol)
	restore := "*nat\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-SVC-X - [0:0]\n" +
		`-A KUBE-SVC-X -m comment --comment "default/web cluster IP" -m tcp -p tcp -d fd00:10:96::a --dport 80 ` + strings.Join(m.NotLocal, " ") + " -j KUBE-MARK-MASQ\nCOMMIT\n"
	cmd := exec.Command("ip", "netns", "exec", ns, "ip6tables-restore")
	cmd.Stdin = strings.NewReader(restore)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ip6tables-restore: %v: %s\n%s", err, out, restore)
	}
	out, err := exec.Command("ip", "netns", "exec", ns, "ip6tables-save", "-t", "nat").Output()
	if err != nil {
		t.Fatalf("ip6tables-save: %v", err)
	}
	want := "-A KUBE-SVC-X " + m.iptablesRule(netip.MustParseAddr("fd00:10:96::a"), 80, "default/web")
	if lines := kit.Lines(string(out)); !slices.Contains(lines, want) {
		t.Errorf("ip6tables-save does not print\n  %s\nits rules:\n  %s", want, strings.Join(lines, "\n  "))
	}
}
