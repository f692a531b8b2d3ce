package conformance

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/scenarios/kit"
)

// node1 is the node the expectations are for: pod range 10.244.1.0/24.
var node1 = kit.Node{Name: "node1", PodCIDR: netip.MustParsePrefix("10.244.1.0/24")}

// masqueradeCases are one configuration per way upstream v1.36 masquerades
// cluster-IP traffic, with what each must give: the KUBE-SVC chain's
// first rule for 10.96.0.20:80 of default/two as iptables-save prints it
// ("" none), the nftables not-local match, and which connections are
// marked. listing names the testdata/nft/masquerade listing of the same
// configuration.
var masqueradeCases = []struct {
	name     string
	cfg      kit.ProxyConfig
	node     kit.Node
	iptables string
	nft      string
	fromPod  bool
	outside  bool
	listing  string
}{
	{"ClusterCIDR (upstream's default mode)", cfg(func(c *kit.ProxyConfig) { c.ClusterCIDRs = []string{"10.244.0.0/16"} }), node1,
		`! -s 10.244.0.0/16 -d 10.96.0.20/32 -p tcp -m comment --comment "default/two cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
		"ip saddr != 10.244.0.0/16", false, true, "clustercidr"},
	{"ClusterCIDR dual-stack, IPv6 first, not canonical", cfg(func(c *kit.ProxyConfig) {
		c.ClusterCIDRs = []string{"fd00:10:244::/56", "10.244.7.1/16"}
	}), node1,
		`! -s 10.244.0.0/16 -d 10.96.0.20/32 -p tcp -m comment --comment "default/two cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
		"ip saddr != 10.244.0.0/16", false, true, "clustercidr"},
	{"ClusterCIDR without a clusterCIDR: no detector", kit.DefaultProxyConfig(), node1, "", "", false, false, "none"},
	{"masqueradeAll", cfg(func(c *kit.ProxyConfig) { c.MasqueradeAll, c.ClusterCIDRs = true, []string{"10.244.0.0/16"} }), node1,
		`-d 10.96.0.20/32 -p tcp -m comment --comment "default/two cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
		"", true, true, "masqueradeall"},
	{"masqueradeAll with InterfaceNamePrefix", cfg(func(c *kit.ProxyConfig) {
		c.MasqueradeAll, c.DetectLocalMode, c.InterfaceNamePrefix = true, kit.DetectLocalInterfaceNamePrefix, "veth"
	}), node1,
		`-d 10.96.0.20/32 -p tcp -m comment --comment "default/two cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
		"", true, true, "masqueradeall"},
	{"InterfaceNamePrefix", cfg(func(c *kit.ProxyConfig) {
		c.DetectLocalMode, c.InterfaceNamePrefix, c.ClusterCIDRs = kit.DetectLocalInterfaceNamePrefix, "veth", []string{"10.244.0.0/16"}
	}), node1,
		`-d 10.96.0.20/32 ! -i veth+ -p tcp -m comment --comment "default/two cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
		"iifname != veth*", false, true, "prefix"},
	{"BridgeInterface", cfg(func(c *kit.ProxyConfig) {
		c.DetectLocalMode, c.BridgeInterface = kit.DetectLocalBridgeInterface, "cni0"
	}), node1,
		`-d 10.96.0.20/32 ! -i cni0 -p tcp -m comment --comment "default/two cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
		"iifname != cni0", false, true, "bridge"},
	{"NodeCIDR", cfg(func(c *kit.ProxyConfig) { c.DetectLocalMode = kit.DetectLocalNodeCIDR }), node1,
		`! -s 10.244.1.0/24 -d 10.96.0.20/32 -p tcp -m comment --comment "default/two cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
		"ip saddr != 10.244.1.0/24", false, true, ""},
	{"NodeCIDR on a node without a podCIDR", cfg(func(c *kit.ProxyConfig) { c.DetectLocalMode = kit.DetectLocalNodeCIDR }), kit.Node{Name: "bare"},
		"", "", false, false, "none"},
	{"a detectLocalMode upstream does not know", cfg(func(c *kit.ProxyConfig) {
		c.DetectLocalMode, c.ClusterCIDRs = "Telepathy", []string{"10.244.0.0/16"}
	}), node1, "", "", false, false, "none"},
}

// cfg is upstream's defaults changed by set.
func cfg(set func(*kit.ProxyConfig)) kit.ProxyConfig {
	c := kit.DefaultProxyConfig()
	set(&c)
	return c
}

func TestExpectedMasquerade(t *testing.T) {
	ip := netip.MustParseAddr("10.96.0.20")
	for _, tc := range masqueradeCases {
		m := expectedMasquerade(tc.cfg, tc.node, "")
		if got := m.iptablesRule(ip, 80, "default/two"); got != tc.iptables {
			t.Errorf("%s: iptables rule\n  %s\nwant\n  %s", tc.name, got, tc.iptables)
		}
		if got := m.nftMatch(); got != tc.nft {
			t.Errorf("%s: nft match %q, want %q", tc.name, got, tc.nft)
		}
		if m.Rule != (tc.iptables != "") {
			t.Errorf("%s: Rule %t with iptables rule %q", tc.name, m.Rule, tc.iptables)
		}
		pod, outside := m.marks(kit.Client{Pod: "probe", Node: "node1"}), m.marks(kit.Client{Node: "node1"})
		if pod != tc.fromPod || outside != tc.outside {
			t.Errorf("%s: marks a pod's connection %t, an outside one %t; want %t, %t", tc.name, pod, outside, tc.fromPod, tc.outside)
		}
		if m.Why == "" {
			t.Errorf("%s: no Why", tc.name)
		}
	}
}

// TestIPTablesMasqueradeProblem: a KUBE-SVC chain is accepted with the
// masquerade rule its configuration calls for and refused with another
// configuration's.
func TestIPTablesMasqueradeProblem(t *testing.T) {
	ip := netip.MustParseAddr("10.96.0.20")
	endpoint := kit.Rule{Chain: "KUBE-SVC-X", Spec: `-m comment --comment "default/two -> 10.244.1.5:8080" -j KUBE-SEP-Y`}
	for _, have := range masqueradeCases {
		rules := []kit.Rule{endpoint}
		if have.iptables != "" {
			rules = []kit.Rule{{Chain: "KUBE-SVC-X", Spec: have.iptables}, endpoint}
		}
		for _, want := range masqueradeCases {
			problem := iptablesMasqueradeProblem(rules, ip, "default/two", expectedMasquerade(want.cfg, want.node, ""))
			if same := have.iptables == want.iptables; same != (problem == "") {
				t.Errorf("chain of %q checked for %q: problem %q", have.name, want.name, problem)
			}
		}
	}
}

// TestNFTMasqueradeProblem: each listing of testdata/nft/masquerade (as
// nft -j lists the rules kube-proxy writes) is accepted for the
// configurations that write it and refused for the others.
func TestNFTMasqueradeProblem(t *testing.T) {
	listings := map[string]string{}
	for _, tc := range masqueradeCases {
		if tc.listing != "" {
			listings[tc.listing] = readMasqueradeListing(t, tc.listing+".json")
		}
	}
	listings["servicechain"] = readMasqueradeListing(t, "servicechain.json")
	checkNFTMasquerade(t, listings)
}

// checkNFTMasquerade checks every listing against every case.
func checkNFTMasquerade(t *testing.T, listings map[string]string) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "two"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.20"}}
	writtenBy := map[string]string{"servicechain": "clustercidr"} // kube-proxy before 1.36, same configuration
	for name, table := range listings {
		for _, tc := range masqueradeCases {
			if tc.listing == "" {
				continue
			}
			problem := nftMasqueradeProblem(table, svc, expectedMasquerade(tc.cfg, tc.node, ""))
			accept := tc.listing == name || tc.listing == writtenBy[name]
			if accept != (problem == "") {
				t.Errorf("listing %s checked for %q: problem %q, want accepted %t", name, tc.name, problem, accept)
			}
			if !accept && !strings.Contains(problem, expectedMasquerade(tc.cfg, tc.node, "").Why) {
				t.Errorf("listing %s checked for %q: problem %q does not say why", name, tc.name, problem)
			}
		}
	}
}

func readMasqueradeListing(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "nft", "masquerade", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestIntegrationNFTMasqueradeListing loads each testdata/nft/masquerade
// listing's .nft into a scratch network namespace with this host's nft,
// lists it with nft -j, and checks the live listings as the committed
// ones.
func TestIntegrationNFTMasqueradeListing(t *testing.T) {
	roottest.Require(t, "creates a network namespace and loads nftables rules into it")
	if err := hostprog.Check(hostprog.NFT); err != nil {
		t.Fatal(err)
	}
	ns := roottest.Netns(t, "svclab-nftmasq")
	files, err := filepath.Glob(filepath.Join("testdata", "nft", "masquerade", "*.nft"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no listings: %v", err)
	}
	live := map[string]string{}
	for _, f := range files {
		if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-f", f).CombinedOutput(); err != nil {
			t.Fatalf("nft -f %s: %v: %s", f, err, out)
		}
		out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-j", "list", "table", "ip", "kube-proxy").Output()
		if err != nil {
			t.Fatalf("nft -j list table ip kube-proxy: %v", err)
		}
		live[strings.TrimSuffix(filepath.Base(f), ".nft")] = string(out)
		if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "delete", "table", "ip", "kube-proxy").CombinedOutput(); err != nil {
			t.Fatalf("nft delete table ip kube-proxy: %v: %s", err, out)
		}
	}
	checkNFTMasquerade(t, live)
}

// TestIntegrationIPTablesMasqueradeRule writes each case's masquerade
// rule as upstream's iptables proxier does (its argument order:
// comment, -m tcp -p tcp, -d, --dport, the not-local match, the jump)
// into a scratch namespace with iptables-restore, and checks that
// iptables-save prints it as iptablesRule says.
func TestIntegrationIPTablesMasqueradeRule(t *testing.T) {
	roottest.Require(t, "creates a network namespace and loads iptables rules into it")
	ns := roottest.Netns(t, "svclab-iptmasq")
	var restore strings.Builder
	restore.WriteString("*nat\n:KUBE-MARK-MASQ - [0:0]\n")
	var want []string
	for i, tc := range masqueradeCases {
		m := expectedMasquerade(tc.cfg, tc.node, "")
		if !m.Rule {
			continue
		}
		chain := fmt.Sprintf("KUBE-SVC-CASE%d", i)
		fmt.Fprintf(&restore, ":%s - [0:0]\n-A %s -m comment --comment \"default/two cluster IP\" -m tcp -p tcp -d 10.96.0.20 --dport 80 %s -j KUBE-MARK-MASQ\n",
			chain, chain, strings.Join(m.NotLocal, " "))
		want = append(want, "-A "+chain+" "+tc.iptables)
	}
	restore.WriteString("COMMIT\n")
	cmd := exec.Command("ip", "netns", "exec", ns, "iptables-restore")
	cmd.Stdin = strings.NewReader(restore.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("iptables-restore: %v: %s\n%s", err, out, restore.String())
	}
	out, err := exec.Command("ip", "netns", "exec", ns, "iptables-save", "-t", "nat").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	lines := kit.Lines(string(out))
	for _, w := range want {
		if !slices.Contains(lines, w) {
			t.Errorf("iptables-save does not print\n  %s\nits rules:\n  %s", w, strings.Join(lines, "\n  "))
		}
	}
}
