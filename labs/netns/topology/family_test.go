package topology

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// TestIPv4LabListsAreItsFields: an ipv4 lab (no spec.ipFamily) parses as
// it always did, and each list holds exactly its one field.
func TestIPv4LabListsAreItsFields(t *testing.T) {
	lab, err := Parse([]byte(base), "base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := lab.Spec
	if s.IPFamily != "" || !slices.Equal(s.Families(), []IPFamily{IPFamilyIPv4}) {
		t.Errorf("family %q, families %v", s.IPFamily, s.Families())
	}
	if !slices.Equal(s.PodSubnets, []netip.Prefix{s.PodSubnet}) || !slices.Equal(s.ServiceSubnets, []netip.Prefix{s.ServiceSubnet}) {
		t.Errorf("subnets %v %v", s.PodSubnets, s.ServiceSubnets)
	}
	for _, n := range s.Nodes {
		if !slices.Equal(n.IPs, []netip.Prefix{n.IP}) || !slices.Equal(n.PodCIDRs, []netip.Prefix{n.PodCIDR}) {
			t.Errorf("node %s: %v %v", n.Name, n.IPs, n.PodCIDRs)
		}
	}
	if c := s.Clients[0]; !slices.Equal(c.IPs, []netip.Prefix{c.IP}) {
		t.Errorf("client: %v", c.IPs)
	}
}

// TestFamilyDefaultsAndDerivations: an ipv6 or dual lab may leave out
// its IPv6 subnets (kind's defaults), its hosts' IPv6 addresses and its
// nodes' IPv6 ranges (derived from the IPv4 ones); what it writes wins.
func TestFamilyDefaultsAndDerivations(t *testing.T) {
	type want struct {
		pods, services, node1IPs, node1CIDRs, clientIPs []netip.Prefix
	}
	cases := []struct {
		name string
		doc  string
		want want
	}{
		{"ipv6 from the ipv4 file", edit(t, "cni: flannel-vxlan", "cni: flannel-vxlan\n  ipFamily: ipv6"), want{
			prefixes("fd00:10:244::/56"), prefixes("fd00:10:96::/112"),
			prefixes("fd00::c0a8:1049/116"), prefixes("fd00:10:244:1::/64"), prefixes("fd00::c0a8:37e6/120"),
		}},
		{"ipv6 with another IPv4 pod subnet to derive from", strings.NewReplacer(
			"cni: flannel-vxlan", "cni: flannel-vxlan\n  ipFamily: ipv6",
			"podSubnet: 10.244.0.0/16", "podSubnet: 10.100.0.0/16",
			"podCIDR: 10.244.1.0/24", "podCIDR: 10.100.40.0/24",
			"podCIDR: 10.244.2.0/24", "podCIDR: 10.100.81.0/24",
		).Replace(base), want{
			prefixes("fd00:10:244::/56"), prefixes("fd00:10:96::/112"),
			prefixes("fd00::c0a8:1049/116"), prefixes("fd00:10:244:28::/64"), prefixes("fd00::c0a8:37e6/120"),
		}},
		{"dual from the ipv4 file", edit(t, "cni: flannel-vxlan", "cni: flannel-vxlan\n  ipFamily: dual"), want{
			prefixes("10.244.0.0/16", "fd00:10:244::/56"), prefixes("10.96.0.0/16", "fd00:10:96::/112"),
			prefixes("192.168.16.73/20", "fd00::c0a8:1049/116"), prefixes("10.244.1.0/24", "fd00:10:244:1::/64"),
			prefixes("192.168.55.230/24", "fd00::c0a8:37e6/120"),
		}},
		{"dual, IPv6 primary, all written", strings.NewReplacer(
			"cni: flannel-vxlan", "cni: flannel-vxlan\n  ipFamily: dual",
			"podSubnet: 10.244.0.0/16", "podSubnet: fd00:1::/48,10.244.0.0/16",
			"serviceSubnet: 10.96.0.0/16", "serviceSubnet: fd00:2::/108, 10.96.0.0/16",
			"ip: 192.168.16.73/20", `ip: "192.168.16.73/20,fd00:3::73/64"`,
			"ip: 192.168.16.74/20", `ip: "fd00:3::74/64,192.168.16.74/20"`,
			"podCIDR: 10.244.1.0/24", `podCIDR: "fd00:1:0:7::/64,10.244.1.0/24"`,
			"ip: 192.168.55.230/24", "ip: fd00:4::230/64",
		).Replace(base), want{
			prefixes("fd00:1::/48", "10.244.0.0/16"), prefixes("fd00:2::/108", "10.96.0.0/16"),
			prefixes("fd00:3::73/64", "192.168.16.73/20"), prefixes("fd00:1:0:7::/64", "10.244.1.0/24"),
			nil, // the client has no IPv4 address: a problem
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lab, err := Parse([]byte(c.doc), "x.yaml")
			if c.want.clientIPs == nil {
				want := `topology x.yaml: spec.clients[0].ip "fd00:4::230/64": no ipv4 value: a dual lab needs one per IP family (write both, comma-separated, the primary first)`
				if err == nil || err.Error() != want {
					t.Fatalf("err = %v\nwant %s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s, n, cl := lab.Spec, lab.Spec.Nodes[0], lab.Spec.Clients[0]
			for _, check := range []struct {
				what      string
				got, want []netip.Prefix
				single    netip.Prefix
			}{
				{"podSubnets", s.PodSubnets, c.want.pods, s.PodSubnet},
				{"serviceSubnets", s.ServiceSubnets, c.want.services, s.ServiceSubnet},
				{"node IPs", n.IPs, c.want.node1IPs, n.IP},
				{"node podCIDRs", n.PodCIDRs, c.want.node1CIDRs, n.PodCIDR},
				{"client IPs", cl.IPs, c.want.clientIPs, cl.IP},
			} {
				if !slices.Equal(check.got, check.want) || check.single != check.want[0] {
					t.Errorf("%s = %v (primary %v), want %v", check.what, check.got, check.single, check.want)
				}
			}
			if err := lab.Validate(); err != nil {
				t.Errorf("Validate of a parsed lab: %v", err)
			}
			if !slices.Equal(lab.Spec.PodSubnets, c.want.pods) {
				t.Errorf("Validate changed the lab: %v", lab.Spec.PodSubnets)
			}
		})
	}
}

// TestFamilyProblems: every family mistake is one line naming the file
// and the field.
func TestFamilyProblems(t *testing.T) {
	dual := func(old, new string) string {
		return strings.Replace(edit(t, old, new), "cni: flannel-vxlan", "cni: flannel-vxlan\n  ipFamily: dual", 1)
	}
	v6 := func(old, new string) string {
		return strings.Replace(edit(t, old, new), "cni: flannel-vxlan", "cni: flannel-vxlan\n  ipFamily: ipv6", 1)
	}
	cases := []struct{ name, doc, want string }{
		{"unknown family", edit(t, "cni: flannel-vxlan", "cni: flannel-vxlan\n  ipFamily: IPv6"),
			`topology x.yaml: spec.ipFamily "IPv6": unknown IP family (one of "ipv4", "ipv6", "dual", or empty for ipv4)`},
		{"two values in an ipv4 lab", edit(t, "podSubnet: 10.244.0.0/16", "podSubnet: 10.244.0.0/16,fd00:10:244::/56"),
			`topology x.yaml: spec.podSubnet "fd00:10:244::/56": IPv6 in an ipv4 lab (set spec.ipFamily to ipv6 or dual)`},
		{"two of one family", dual("podSubnet: 10.244.0.0/16", "podSubnet: 10.244.0.0/16,10.245.0.0/16"),
			`topology x.yaml: spec.podSubnet "10.244.0.0/16,10.245.0.0/16": two ipv4 values: at most one per IP family`},
		{"three values", dual("podSubnet: 10.244.0.0/16", "podSubnet: 10.244.0.0/16,fd00::/56,fd01::/56"),
			`topology x.yaml: spec.podSubnet "10.244.0.0/16,fd00::/56,fd01::/56": 3 values: at most one per IP family`},
		{"empty value", dual("podSubnet: 10.244.0.0/16", "podSubnet: 10.244.0.0/16,"),
			`topology x.yaml: spec.podSubnet "10.244.0.0/16,": an empty value in the comma-separated list`},
		{"bad second value", dual("podSubnet: 10.244.0.0/16", "podSubnet: 10.244.0.0/16,fd00::/129"),
			`topology x.yaml: spec.podSubnet "fd00::/129": invalid CIDR`},
		{"primary families differ", dual("serviceSubnet: 10.96.0.0/16", "serviceSubnet: fd00:10:96::/112,10.96.0.0/16"),
			`topology x.yaml: spec.serviceSubnet "fd00:10:96::/112": starts with ipv6, and spec.podSubnet with ipv4: write both with the primary family first`},
		{"ipv6 pod subnet too small", v6("podSubnet: 10.244.0.0/16", "podSubnet: fd00:10:244::/72"),
			`topology x.yaml: spec.podSubnet "fd00:10:244::/72": too small: each node gets a /64 of it (kube-controller-manager's node-cidr-mask-size-ipv6)`},
		{"ipv6 pod subnet too large", v6("podSubnet: 10.244.0.0/16", "podSubnet: fd00::/40"),
			`topology x.yaml: spec.podSubnet "fd00::/40": too large: kube-controller-manager allows at most 16 bits between it and a node's /64 (want a /48 or longer)`},
		{"ipv6 service subnet too large", v6("serviceSubnet: 10.96.0.0/16", "serviceSubnet: fd00:10:96::/64"),
			`topology x.yaml: spec.serviceSubnet "fd00:10:96::/64": too large: kube-apiserver takes an IPv6 Service range of at most 20 bits (a /108)`},
		{"ipv6 service subnet too small", v6("serviceSubnet: 10.96.0.0/16", "serviceSubnet: fd00:10:96::/126"),
			`topology x.yaml: spec.serviceSubnet "fd00:10:96::/126": too small: the lab's kube-dns Service takes its tenth address (kubeadm's DNS IP); want a /124 or larger`},
		{"ipv6 subnets overlap", v6("serviceSubnet: 10.96.0.0/16", "serviceSubnet: fd00:10:244:ff::/112"),
			`topology x.yaml: spec.serviceSubnet "fd00:10:244:ff::/112": overlaps spec.podSubnet fd00:10:244::/56`},
		{"ipv6 not a network", v6("podSubnet: 10.244.0.0/16", "podSubnet: fd00:10:244::1/56"),
			`topology x.yaml: spec.podSubnet "fd00:10:244::1/56": not a network address (did you mean fd00:10:244::/56?)`},
		{"ipv6 anycast host", dual("ip: 192.168.16.74/20", `ip: "192.168.16.74/20,fd00:5::/64"`),
			`topology x.yaml: spec.nodes[1].ip "fd00:5::/64": is the subnet's Subnet-Router anycast address`},
		{"ipv6 link-local host", dual("ip: 192.168.16.74/20", `ip: "192.168.16.74/20,fe80::2/64"`),
			`topology x.yaml: spec.nodes[1].ip "fe80::2/64": not a unicast address a host may have (link-local, multicast, loopback or unspecified)`},
		{"ipv6 duplicate host", dual("ip: 192.168.16.74/20", `ip: "192.168.16.74/20,fd00::c0a8:1049/116"`),
			`topology x.yaml: spec.nodes[1].ip "fd00::c0a8:1049/116": duplicate address (already used by spec.nodes[0].ip)`},
		{"ipv6 host on the pod subnet", dual("ip: 192.168.16.74/20", `ip: "192.168.16.74/20,fd00:10:244:ff::2/64"`),
			`topology x.yaml: spec.nodes[1].ip "fd00:10:244:ff::2/64": subnet fd00:10:244:ff::/64 overlaps spec.podSubnet fd00:10:244::/56`},
		{"subnets not paired", dual("ip: 192.168.16.74/20", `ip: "192.168.16.74/20,fd00:5::74/64"`),
			`topology x.yaml: spec.nodes[1].ip "192.168.16.74/20,fd00:5::74/64": its subnets 192.168.16.0/20 and fd00:5::/64: spec.nodes[0].ip has 192.168.16.0/20 with fd00::c0a8:1000/116 (hosts that share a subnet of one family share that of the other: each pair is one bridge of the lab's router)`},
		{"ipv4 pool in an ipv6 lab", v6("clients:", "loadBalancer: {pool: 192.168.100.10-192.168.100.20}\n  clients:"),
			`topology x.yaml: spec.loadBalancer.pool "192.168.100.10-192.168.100.20": an ipv6 lab has no IPv4 route to its nodes (use a dual lab)`},
		{"ipv4 external IPs in an ipv6 lab", v6("clients:", "externalIPs: [203.0.113.0/24]\n  clients:"),
			`topology x.yaml: spec.externalIPs[0] "203.0.113.0/24": an ipv6 lab has no IPv4 route to its nodes (use a dual lab)`},
		{"ipv6 pod range outside", dual("podCIDR: 10.244.2.0/24", `podCIDR: "10.244.2.0/24,fd00:9::/64"`),
			`topology x.yaml: spec.nodes[1].podCIDR "fd00:9::/64": not inside spec.podSubnet fd00:10:244::/56`},
		{"ipv6 pod ranges overlap", dual("podCIDR: 10.244.2.0/24", `podCIDR: "10.244.2.0/24,fd00:10:244:1::/64"`),
			`topology x.yaml: spec.nodes[1].podCIDR "fd00:10:244:1::/64": overlaps spec.nodes[0].podCIDR fd00:10:244:1::/64`},
		{"ipv6 range not derivable", dual("podSubnet: 10.244.0.0/16", "podSubnet: 10.244.0.0/16,fd00:10:244::/63"),
			`topology x.yaml: spec.nodes[1].podCIDR "10.244.2.0/24": no ipv6 value: a dual lab needs one per IP family (write both, comma-separated, the primary first)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc), "x.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("err = %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestValidateCompletesHandBuiltDualLab: a lab built in code with only
// the single fields gets its lists as a parsed file would, and a second
// Validate changes nothing.
func TestValidateCompletesHandBuiltDualLab(t *testing.T) {
	lab := &Lab{APIVersion: APIVersion, Kind: Kind, Metadata: Metadata{Name: "hand"}, Spec: Spec{
		CNI: CNICanal, IPFamily: IPFamilyDual, Proxy: Proxy{Mode: ProxyModeIPTables},
		PodSubnet:     netip.MustParsePrefix("10.244.0.0/16"),
		ServiceSubnet: netip.MustParsePrefix("10.96.0.0/16"),
		Nodes:         []Node{{Name: "n", IP: netip.MustParsePrefix("192.168.16.73/20"), PodCIDR: netip.MustParsePrefix("10.244.7.0/24")}},
	}}
	for range 2 {
		if err := lab.Validate(); err != nil {
			t.Fatal(err)
		}
		n := lab.Spec.Nodes[0]
		if !slices.Equal(n.PodCIDRs, prefixes("10.244.7.0/24", "fd00:10:244:7::/64")) || !slices.Equal(n.IPs, prefixes("192.168.16.73/20", "fd00::c0a8:1049/116")) ||
			!slices.Equal(lab.Spec.ServiceSubnets, prefixes("10.96.0.0/16", "fd00:10:96::/112")) {
			t.Errorf("after Validate: node %+v, services %v", n, lab.Spec.ServiceSubnets)
		}
	}
}

// TestDualLabTakesIPv4LoadBalancerBlocks: a dual lab's IPv4 load balancer
// pool and external IPs are checked against its IPv4 subnets only (they
// once reached an IPv4-only range computation with the IPv6 subnets, and
// Parse panicked).
func TestDualLabTakesIPv4LoadBalancerBlocks(t *testing.T) {
	doc := strings.Replace(edit(t, "clients:", "loadBalancer: {pool: 192.168.100.10-192.168.100.20}\n  externalIPs: [203.0.113.0/24]\n  clients:"),
		"cni: flannel-vxlan", "cni: flannel-vxlan\n  ipFamily: dual", 1)
	lab, err := Parse([]byte(doc), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := lab.Spec.LoadBalancer.Pool.String(); got != "192.168.100.10-192.168.100.20" {
		t.Errorf("pool = %s", got)
	}
	clash := strings.Replace(edit(t, "clients:", "loadBalancer: {pool: 10.244.200.0/28}\n  clients:"),
		"cni: flannel-vxlan", "cni: flannel-vxlan\n  ipFamily: dual", 1)
	if _, err := Parse([]byte(clash), "x.yaml"); err == nil || !strings.Contains(err.Error(), `spec.loadBalancer.pool "10.244.200.0/28": overlaps spec.podSubnet`) {
		t.Errorf("a pool inside the IPv4 pod subnet of a dual lab: err = %v", err)
	}
}
