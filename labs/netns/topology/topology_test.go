package topology

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// base is a valid two-node lab (testdata/two-node.yaml), the document most
// cases start from; the fuzz target seeds with it too.
var base = func() string {
	data, err := os.ReadFile(filepath.Join("testdata", "two-node.yaml"))
	if err != nil {
		panic(err)
	}
	return string(data)
}()

// edit replaces exactly one occurrence of old in base.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if strings.Count(base, old) != 1 {
		t.Fatalf("test bug: %q occurs %d times in base", old, strings.Count(base, old))
	}
	return strings.Replace(base, old, new, 1)
}

func TestParseBase(t *testing.T) {
	lab, err := Parse([]byte(base), "base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if lab.Name() != "basic" || lab.Spec.CNI != CNIFlannelVXLAN || lab.Source != "base.yaml" {
		t.Errorf("lab = %+v", lab)
	}
	if got, want := lab.Spec.PodSubnet, netip.MustParsePrefix("10.244.0.0/16"); got != want {
		t.Errorf("podSubnet = %v, want %v", got, want)
	}
	n := lab.Spec.Nodes[0]
	if n.IP.Addr() != netip.MustParseAddr("192.168.16.73") || n.IP.Bits() != 20 ||
		n.IP.Masked() != netip.MustParsePrefix("192.168.16.0/20") {
		t.Errorf("node IP = %v", n.IP)
	}
	if n.PodCIDR != netip.MustParsePrefix("10.244.1.0/24") {
		t.Errorf("podCIDR = %v", n.PodCIDR)
	}
	if got := lab.Hosts(); len(got) != 3 || got[2].Role != RoleClient || got[0].Role != RoleNode {
		t.Errorf("Hosts() = %+v", got)
	}
	if _, ok := lab.Node("node2"); !ok {
		t.Error("Node(node2) not found")
	}
	if _, ok := lab.Node("client"); ok {
		t.Error("Node(client) found a client")
	}
}

func TestProxyDefaults(t *testing.T) {
	lab, err := Parse([]byte(edit(t, `  proxy: {mode: iptables, iptablesBackend: ""}`+"\n", "")), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if lab.Spec.Proxy.Mode != ProxyModeIPTables || lab.Spec.Proxy.IPTablesBackend != BackendDefault {
		t.Errorf("proxy = %+v, want iptables with the default backend", lab.Spec.Proxy)
	}
	lab, err = Parse([]byte(edit(t, `{mode: iptables, iptablesBackend: ""}`, `{mode: ipvs, iptablesBackend: nft}`)), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if lab.Spec.Proxy.Mode != ProxyModeIPVS || lab.Spec.Proxy.IPTablesBackend.RestoreCommand() != "iptables-nft-restore" {
		t.Errorf("proxy = %+v", lab.Spec.Proxy)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string // the whole message
	}{
		{"empty", "", `topology x.yaml: empty file: expected a Lab document`},
		{"null", "---\n", `topology x.yaml: empty file: expected a Lab document`},
		{"not yaml", "a: [", `topology x.yaml: invalid YAML: line 1: did not find expected node content`},
		{"duplicate key", edit(t, "kind: Lab\n", "kind: Lab\nkind: Lab\n"),
			`topology x.yaml: invalid YAML: line 3: key "kind" already set in map`},
		{"not a mapping", "- a\n", `topology x.yaml: (document): expected a mapping, got a list`},
		{"unknown top-level field", edit(t, "kind: Lab\n", "kind: Lab\nstatus: {}\n"),
			`topology x.yaml: status: unknown field (known fields here: apiVersion, kind, metadata, spec)`},
		{"unknown nested field", edit(t, "podCIDR: 10.244.2.0/24}", "podCidr: 10.244.2.0/24}"),
			`topology x.yaml: spec.nodes[1].podCidr: unknown field (known fields here: name, ip, podCIDR)`},
		{"unknown proxy field", edit(t, `mode: iptables,`, `mode: iptables, scheduler: rr,`),
			`topology x.yaml: spec.proxy.scheduler: unknown field (known fields here: mode, iptablesBackend)`},
		{"wrong kind of value", edit(t, "{name: node1,", "{name: 7,"),
			`topology x.yaml: spec.nodes[0].name: expected a string, got the number 7 (quote it)`},
		{"nodes not a list", edit(t, "  nodes:\n", "  nodes: {}\n  x:\n"),
			`topology x.yaml: spec.nodes: expected a list, got a mapping`},
		{"wrong kind of value in the second node", edit(t, "{name: node2,", "{name: true,"),
			`topology x.yaml: spec.nodes[1].name: expected a string, got the boolean true (quote it)`},
		{"wrong kind of value after a good one", edit(t, "podCIDR: 10.244.2.0/24}", "podCIDR: 1.5}"),
			`topology x.yaml: spec.nodes[1].podCIDR: expected a string, got the number 1.5 (quote it)`},
		{"list for a string", edit(t, "ip: 192.168.55.230/24", "ip: [192.168.55.230/24]"),
			`topology x.yaml: spec.clients[0].ip: expected a string, got a list`},
		{"node not a mapping", edit(t, "  - {name: node2, ip: 192.168.16.74/20, podCIDR: 10.244.2.0/24}\n", "  - 5\n"),
			`topology x.yaml: spec.nodes[1]: expected a mapping, got the number 5`},
		{"proxy not a mapping", edit(t, `proxy: {mode: iptables, iptablesBackend: ""}`, "proxy: iptables"),
			`topology x.yaml: spec.proxy: expected a mapping, got the string "iptables"`},
		// Keys are checked in sorted order at each level (the JSON form sorts them).
		{"first unknown field in key order", strings.Replace(edit(t, "podCIDR: 10.244.1.0/24}", "podCIDR: 10.244.1.0/24, zone: a}"), "clients:", "aaa: 1\n  clients:", 1),
			`topology x.yaml: spec.aaa: unknown field (known fields here: cni, ipFamily, podSubnet, serviceSubnet, proxy, nodes, clients, loadBalancer, externalIPs)`},
		{"missing apiVersion", edit(t, "apiVersion: svclab.dev/v1alpha1\n", ""),
			`topology x.yaml: apiVersion: required (want "svclab.dev/v1alpha1")`},
		{"wrong apiVersion", edit(t, "svclab.dev/v1alpha1", "v1"),
			`topology x.yaml: apiVersion "v1": unknown (want "svclab.dev/v1alpha1")`},
		{"missing kind", edit(t, "kind: Lab\n", ""), `topology x.yaml: kind: required (want "Lab")`},
		{"wrong kind", edit(t, "kind: Lab", "kind: Pod"), `topology x.yaml: kind "Pod": unknown (want "Lab")`},
		{"missing name", edit(t, "{name: basic}", "{}"), `topology x.yaml: metadata.name: required`},
		{"name not a label", edit(t, "{name: basic}", "{name: Basic_1}"),
			`topology x.yaml: metadata.name "Basic_1": not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit`},
		{"name too long", edit(t, "{name: basic}", "{name: a-very-long-lab-name-indeed}"),
			`topology x.yaml: metadata.name "a-very-long-lab-name-indeed": too long: 27 characters, at most 20`},
		{"missing cni", edit(t, "  cni: flannel-vxlan\n", ""),
			`topology x.yaml: spec.cni: required (one of "flannel-vxlan", "calico-proxyarp", "canal")`},
		{"unknown cni", edit(t, "flannel-vxlan", "cilium"),
			`topology x.yaml: spec.cni "cilium": unknown CNI (one of "flannel-vxlan", "calico-proxyarp", "canal")`},
		{"missing podSubnet", edit(t, "  podSubnet: 10.244.0.0/16\n", ""),
			`topology x.yaml: spec.podSubnet: required (a CIDR such as 10.244.0.0/16)`},
		{"invalid podSubnet", edit(t, "podSubnet: 10.244.0.0/16", "podSubnet: 10.244.0.0/33"),
			`topology x.yaml: spec.podSubnet "10.244.0.0/33": invalid CIDR`},
		{"ipv6 podSubnet", edit(t, "podSubnet: 10.244.0.0/16", "podSubnet: fd00::/48"),
			`topology x.yaml: spec.podSubnet "fd00::/48": IPv6 in an ipv4 lab (set spec.ipFamily to ipv6 or dual)`},
		{"podSubnet not a network", edit(t, "podSubnet: 10.244.0.0/16", "podSubnet: 10.244.3.0/16"),
			`topology x.yaml: spec.podSubnet "10.244.3.0/16": not a network address (did you mean 10.244.0.0/16?)`},
		{"invalid serviceSubnet", edit(t, "10.96.0.0/16", "10.96.0/16"),
			`topology x.yaml: spec.serviceSubnet "10.96.0/16": invalid CIDR`},
		{"serviceSubnet too small for kube-dns", edit(t, "10.96.0.0/16", "10.96.0.0/29"),
			`topology x.yaml: spec.serviceSubnet "10.96.0.0/29": too small: the lab's kube-dns Service takes its tenth address (kubeadm's DNS IP); want a /28 or larger`},
		{"service overlaps pods", edit(t, "10.96.0.0/16", "10.240.0.0/12"),
			`topology x.yaml: spec.serviceSubnet "10.240.0.0/12": overlaps spec.podSubnet 10.244.0.0/16`},
		{"unknown proxy mode", edit(t, "mode: iptables", "mode: userspace"),
			`topology x.yaml: spec.proxy.mode "userspace": unknown proxy mode (one of "iptables", "ipvs", "nftables", or empty for iptables)`},
		{"unknown backend", edit(t, `iptablesBackend: ""`, `iptablesBackend: xtables`),
			`topology x.yaml: spec.proxy.iptablesBackend "xtables": unknown backend (one of "legacy", "nft", or empty for the host's default)`},
		{"no nodes", edit(t, "  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}\n  - {name: node2, ip: 192.168.16.74/20, podCIDR: 10.244.2.0/24}\n", ""),
			`topology x.yaml: spec.nodes: at least one node is required`},
		{"missing node name", edit(t, "{name: node1, ", "{"), `topology x.yaml: spec.nodes[0].name: required`},
		{"node name not a label", edit(t, "name: node1", "name: node.1"),
			`topology x.yaml: spec.nodes[0].name "node.1": not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit`},
		{"reserved name", edit(t, "name: node2", "name: router"),
			`topology x.yaml: spec.nodes[1].name "router": reserved for the lab's edge router`},
		{"duplicate node name", edit(t, "name: node2", "name: node1"),
			`topology x.yaml: spec.nodes[1].name "node1": duplicate name (already used by spec.nodes[0].name)`},
		{"client reuses node name", edit(t, "name: client", "name: node2"),
			`topology x.yaml: spec.clients[0].name "node2": duplicate name (already used by spec.nodes[1].name)`},
		{"missing node ip", edit(t, "ip: 192.168.16.74/20, ", ""),
			`topology x.yaml: spec.nodes[1].ip: required (an address with its prefix length, e.g. 192.168.16.73/20)`},
		{"node ip without length", edit(t, "192.168.16.74/20", "192.168.16.74"),
			`topology x.yaml: spec.nodes[1].ip "192.168.16.74": missing prefix length: write address/length, e.g. 192.168.16.74/24`},
		{"node ip garbage", edit(t, "192.168.16.74/20", "node-b"),
			`topology x.yaml: spec.nodes[1].ip "node-b": invalid address: want address/length, e.g. 192.168.16.73/20`},
		{"node ip v6", edit(t, "192.168.16.74/20", "fd00::1/64"),
			`topology x.yaml: spec.nodes[1].ip "fd00::1/64": IPv6 in an ipv4 lab (set spec.ipFamily to ipv6 or dual)`},
		{"node ip /31", edit(t, "192.168.16.74/20", "192.168.16.74/31"),
			`topology x.yaml: spec.nodes[1].ip "192.168.16.74/31": prefix too long: at most /30, the router needs an address on this subnet`},
		{"node ip network address", edit(t, "192.168.16.74/20", "192.168.16.0/20"),
			`topology x.yaml: spec.nodes[1].ip "192.168.16.0/20": is the subnet's network address`},
		{"node ip broadcast", edit(t, "192.168.16.74/20", "192.168.31.255/20"),
			`topology x.yaml: spec.nodes[1].ip "192.168.31.255/20": is the subnet's broadcast address`},
		{"duplicate ip", edit(t, "192.168.16.74/20", "192.168.16.73/20"),
			`topology x.yaml: spec.nodes[1].ip "192.168.16.73/20": duplicate address (already used by spec.nodes[0].ip)`},
		{"node subnet overlaps pods", edit(t, "192.168.16.74/20", "10.244.200.1/24"),
			`topology x.yaml: spec.nodes[1].ip "10.244.200.1/24": subnet 10.244.200.0/24 overlaps spec.podSubnet 10.244.0.0/16`},
		{"client subnet overlaps services", edit(t, "192.168.55.230/24", "10.96.1.1/24"),
			`topology x.yaml: spec.clients[0].ip "10.96.1.1/24": subnet 10.96.1.0/24 overlaps spec.serviceSubnet 10.96.0.0/16`},
		{"host subnets overlap", edit(t, "192.168.55.230/24", "192.168.17.5/24"),
			`topology x.yaml: spec.clients[0].ip "192.168.17.5/24": subnet 192.168.17.0/24 overlaps subnet 192.168.16.0/20 of spec.nodes[0].ip (hosts share a subnet only with the same prefix)`},
		{"missing podCIDR", edit(t, ", podCIDR: 10.244.2.0/24", ""),
			`topology x.yaml: spec.nodes[1].podCIDR: required (a CIDR such as 10.244.0.0/16)`},
		{"invalid podCIDR", edit(t, "10.244.2.0/24", "10.0.0.0/33"),
			`topology x.yaml: spec.nodes[1].podCIDR "10.0.0.0/33": invalid CIDR`},
		{"podCIDR not a network", edit(t, "10.244.2.0/24", "10.244.2.1/24"),
			`topology x.yaml: spec.nodes[1].podCIDR "10.244.2.1/24": not a network address (did you mean 10.244.2.0/24?)`},
		{"podCIDR too small", edit(t, "10.244.2.0/24", "10.244.2.0/31"),
			`topology x.yaml: spec.nodes[1].podCIDR "10.244.2.0/31": too small: at most /30`},
		{"podCIDR outside podSubnet", edit(t, "10.244.2.0/24", "10.245.2.0/24"),
			`topology x.yaml: spec.nodes[1].podCIDR "10.245.2.0/24": not inside spec.podSubnet 10.244.0.0/16`},
		{"podCIDR larger than podSubnet", edit(t, "10.244.2.0/24", "10.0.0.0/8"),
			`topology x.yaml: spec.nodes[1].podCIDR "10.0.0.0/8": not inside spec.podSubnet 10.244.0.0/16`},
		{"podCIDRs overlap", edit(t, "10.244.2.0/24", "10.244.1.128/25"),
			`topology x.yaml: spec.nodes[1].podCIDR "10.244.1.128/25": overlaps spec.nodes[0].podCIDR 10.244.1.0/24`},
		{"missing client ip", edit(t, "{name: client, ip: 192.168.55.230/24}", "{name: client}"),
			`topology x.yaml: spec.clients[0].ip: required (an address with its prefix length, e.g. 192.168.16.73/20)`},
		{"client name not a label", edit(t, "name: client", "name: -client"),
			`topology x.yaml: spec.clients[0].name "-client": not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab, err := Parse([]byte(tt.doc), "x.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want error %q", lab, tt.want)
			}
			var terr *Error
			if !errors.As(err, &terr) {
				t.Errorf("error is %T, want *topology.Error", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got  %s\n want %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	if err == nil || !strings.HasPrefix(err.Error(), "topology ") || !strings.Contains(err.Error(), "missing.yaml: cannot read") {
		t.Errorf("Load(missing) = %v", err)
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte(edit(t, "10.244.2.0/24", "10.0.0.0/33")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	if want := `topology ` + path + `: spec.nodes[1].podCIDR "10.0.0.0/33": invalid CIDR`; err == nil || err.Error() != want {
		t.Errorf("Load(bad) = %v, want %s", err, want)
	}
}

func TestValidateHandBuilt(t *testing.T) {
	lab, err := Parse([]byte(base), "")
	if err != nil {
		t.Fatal(err)
	}
	lab.Spec.Proxy.Mode = "" // empty means iptables for hand-built labs too
	if err := lab.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	lab.Spec.Nodes[1].PodCIDR = netip.Prefix{}
	want := `topology: spec.nodes[1].podCIDR: required (a CIDR such as 10.244.0.0/16)`
	if err := lab.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate = %v, want %s", err, want)
	}
}

func TestShippedClusters(t *testing.T) {
	paths, err := filepath.Glob("../../../clusters/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no clusters/*.yaml found (%v)", err)
	}
	for _, p := range paths {
		if _, err := Load(p); err != nil {
			t.Errorf("%v", err)
		}
	}
	lab, err := Load("../../../clusters/nodeport.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"hosta": {"192.168.16.73/20", "10.100.40.0/24"},
		"hostb": {"192.168.16.139/20", "10.100.81.0/24"},
	}
	for _, n := range lab.Spec.Nodes {
		if w := want[n.Name]; n.IP.String() != w[0] || n.PodCIDR.String() != w[1] {
			t.Errorf("node %s = %v %v, want %v", n.Name, n.IP, n.PodCIDR, w)
		}
	}
	if lab.Spec.CNI != CNICanal || lab.Spec.PodSubnet.String() != "10.100.0.0/16" ||
		lab.Spec.ServiceSubnet.String() != "10.254.0.0/16" ||
		len(lab.Spec.Clients) != 1 || lab.Spec.Clients[0].IP.String() != "192.168.55.230/24" {
		t.Errorf("nodeport lab = %+v", lab.Spec)
	}
}

// TestOneLabPerFile: a second Lab document used to be ignored silently.
func TestOneLabPerFile(t *testing.T) {
	second := strings.Replace(base, "name: basic", "name: other", 1)
	for name, doc := range map[string]string{
		"two labs":              base + "---\n" + second,
		"a bad second document": base + "---\nkind: [\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(doc), "x.yaml")
			want := "topology x.yaml: document 2: a lab file holds one Lab: this second document would be ignored (write one file per lab)"
			if err == nil || err.Error() != want {
				t.Errorf("Parse = %v, want %s", err, want)
			}
		})
	}
	// Empty documents around the one Lab are fine.
	if _, err := Parse([]byte("---\n# the lab\n"+base+"---\n# nothing more\n---\n"), "x.yaml"); err != nil {
		t.Errorf("one Lab between empty documents: %v", err)
	}
}

// TestLoadBounded: `create lab --config /dev/zero` used to read without end.
func TestLoadBounded(t *testing.T) {
	start := time.Now()
	_, err := Load("/dev/zero")
	if want := "topology /dev/zero: larger than 4 MiB: not a lab file"; err == nil || err.Error() != want {
		t.Errorf("Load(/dev/zero) = %v, want %s", err, want)
	}
	// A product promise with a huge margin: 4 MiB read takes milliseconds,
	// reading to the end never ends.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Load(/dev/zero) took %s", d)
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(base+strings.Repeat("#", MaxFileBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Errorf("Load(big) = %v", err)
	}
}

func TestValidateLabName(t *testing.T) {
	for _, ok := range []string{"demo", "a", "lab-1", strings.Repeat("a", MaxLabNameLen)} {
		if err := ValidateLabName(ok); err != nil {
			t.Errorf("ValidateLabName(%q) = %v", ok, err)
		}
	}
	for name, want := range map[string]string{
		"..":                    `lab name "..": not a DNS label`,
		"../../X":               `lab name "../../X": not a DNS label`,
		"a/b":                   `lab name "a/b": not a DNS label`,
		"":                      `lab name "": required`,
		"Demo":                  `lab name "Demo": not a DNS label`,
		strings.Repeat("a", 21): `lab name "aaaaaaaaaaaaaaaaaaaaa": too long: 21 characters, at most 20`,
	} {
		if err := ValidateLabName(name); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ValidateLabName(%q) = %v, want %s…", name, err, want)
		}
	}
}

// bigLab is a lab of n nodes, 250 to a /24 host subnet, each with a /24 of
// pods, and one client.
func bigLab(n int) *Lab {
	lab, err := Parse([]byte(base), "big.yaml")
	if err != nil {
		panic(err)
	}
	lab.Spec.PodSubnet = netip.MustParsePrefix("10.0.0.0/8")
	lab.Spec.ServiceSubnet = netip.MustParsePrefix("172.16.0.0/16")
	lab.Spec.Nodes = nil
	for i := range n {
		host := netip.AddrFrom4([4]byte{100, byte(i / 250 >> 8), byte(i / 250), byte(i%250 + 1)})
		pods := netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0})
		lab.Spec.Nodes = append(lab.Spec.Nodes, Node{
			Name:    fmt.Sprintf("node%d", i),
			IP:      netip.PrefixFrom(host, 24),
			PodCIDR: netip.PrefixFrom(pods, 24),
		})
	}
	return lab
}

// TestValidateIsLinear: a 30,000-node lab used to take 11.5 s (every
// subnet was compared with every other); it takes milliseconds now. The
// bound is loose for a loaded machine; BenchmarkValidate measures.
// TestValidateBigLab checks a 30,000-node lab validates and still reports
// the first declared overlap. How fast that is (linear: ~0.2 s here) is
// BenchmarkValidate's to show, not a timed test's.
func TestValidateBigLab(t *testing.T) {
	lab := bigLab(30000)
	if err := lab.Validate(); err != nil {
		t.Fatal(err)
	}
	// The overlap found is still the first declared one.
	lab.Spec.Nodes[29999].PodCIDR = netip.MustParsePrefix("10.0.0.0/16")
	want := `topology big.yaml: spec.nodes[29999].podCIDR "10.0.0.0/16": overlaps spec.nodes[0].podCIDR 10.0.0.0/24`
	if err := lab.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate = %v, want %s", err, want)
	}
}

func BenchmarkValidate(b *testing.B) {
	lab := bigLab(30000)
	b.ResetTimer()
	for b.Loop() {
		if err := lab.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHostLimits(t *testing.T) {
	lab := bigLab(MaxHosts + 1)
	if err := lab.Validate(); err == nil || err.Error() != "topology big.yaml: spec: too many hosts: 50001 nodes and 1 clients, at most 50000 in all" {
		t.Errorf("Validate = %v", err)
	}
	// 1024 hosts on one subnet: the router's bridge would refuse the last.
	lab = bigLab(1)
	for i := 1; i <= MaxHostsPerSubnet; i++ {
		lab.Spec.Clients = append(lab.Spec.Clients, Client{
			Name: fmt.Sprintf("c%d", i),
			IP:   netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 0, byte(i >> 8), byte(i)}), 16),
		})
	}
	lab.Spec.Nodes[0].IP = netip.MustParsePrefix("100.0.100.1/16")
	want := `topology big.yaml: spec.clients[1023].ip "100.0.3.255/16": subnet 100.0.0.0/16 has more than 1023 hosts: each is a port of the router's bridge for that subnet, and a Linux bridge has at most 1023 ports`
	if err := lab.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate = %v\nwant %s", err, want)
	}
}

// Hosts that take every usable address of their subnet leave none for the
// router's gateway: refused by Parse, not later by the network plan.
func TestSubnetKeepsTheRoutersAddress(t *testing.T) {
	src := `
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: full}
spec:
  cni: flannel-vxlan
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  nodes:
  - {name: a, ip: 10.0.0.1/30, podCIDR: 10.244.1.0/24}
  - {name: b, ip: 10.0.0.2/30, podCIDR: 10.244.2.0/24}
`
	_, err := Parse([]byte(src), "full.yaml")
	want := `topology full.yaml: spec.nodes[1].ip "10.0.0.2/30": subnet 10.0.0.0/30 has 2 usable addresses and its hosts take them all: the lab's router needs one for the hosts' gateway`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := Parse([]byte(strings.Replace(src, "  - {name: b, ip: 10.0.0.2/30, podCIDR: 10.244.2.0/24}\n", "", 1)), "one.yaml"); err != nil {
		t.Errorf("one host on a /30: %v", err)
	}
}
