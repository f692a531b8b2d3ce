package iptables_test

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/localtraffic"
)

func TestNewRendererRejectsBadOptions(t *testing.T) {
	for name, opts := range map[string]iptables.Options{
		"bad cluster CIDR":                      {ClusterCIDR: "10.244.0.0/33"},
		"IPv6 cluster CIDR":                     {ClusterCIDR: "fd00::/64"},
		"masquerade bit 32":                     {MasqueradeBit: 32},
		"IPv6 node IP":                          {NodeIP: netip.MustParseAddr("fd00::1")},
		"IPv6 nodeport addr":                    {NodePortAddresses: []netip.Addr{netip.MustParseAddr("fd00::1")}},
		"IPv4 cluster CIDR of an IPv6 renderer": {Family: corev1.IPv6Protocol, ClusterCIDR: "10.244.0.0/16"},
		"IPv4 node IP of an IPv6 renderer":      {Family: corev1.IPv6Protocol, NodeIP: netip.MustParseAddr("10.0.0.1")},
		"family IPv5":                           {Family: "IPv5"},
	} {
		if _, err := iptables.NewRenderer(opts); err == nil {
			t.Errorf("%s: NewRenderer must fail", name)
		}
	}
}

func TestOptionsShapeTheFixedRules(t *testing.T) {
	cases := []struct {
		name      string
		opts      iptables.Options
		contains  []string
		forbidden []string
	}{{
		name:     "masquerade bit",
		opts:     iptables.Options{MasqueradeBit: 13},
		contains: []string{"-A KUBE-MARK-MASQ -j MARK --or-mark 0x00002000", "--mark 0x00002000/0x00002000 -j ACCEPT"},
	}, {
		name:      "no --random-fully",
		opts:      iptables.Options{},
		contains:  []string{`"kubernetes service traffic requiring SNAT" -j MASQUERADE` + "\n"},
		forbidden: []string{"--random-fully"},
	}, {
		name:      "conntrack liberal drops no INVALID packets",
		opts:      iptables.Options{ConntrackTCPBeLiberal: true},
		forbidden: []string{"INVALID"},
	}, {
		name: "node port addresses",
		opts: iptables.Options{NodePortAddresses: []netip.Addr{netip.MustParseAddr("192.168.0.10"), netip.MustParseAddr("127.0.0.1")}},
		contains: []string{
			`-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 192.168.0.10 -j KUBE-NODEPORTS`,
		},
		forbidden: []string{"-d 127.0.0.1 -j KUBE-NODEPORTS", "--dst-type LOCAL ! -d"},
	}, {
		// Upstream: --nodeport-addresses that match no local address leave
		// node ports unreachable, and without 127.0.0.0/8 in them localhost
		// node ports are off.
		name:      "node port CIDRs matching no address",
		opts:      iptables.Options{LocalhostNodePorts: true, NodePortCIDRs: []netip.Prefix{netip.MustParsePrefix("10.9.9.0/24")}},
		forbidden: []string{"-j KUBE-NODEPORTS", "block incoming localnet connections", ":KUBE-FIREWALL"},
	}, {
		name: "node port CIDRs with loopback keep localhost node ports",
		opts: iptables.Options{LocalhostNodePorts: true, NodePortCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			NodePortAddresses: []netip.Addr{netip.MustParseAddr("127.0.0.1")}},
		contains: []string{
			"block incoming localnet connections",
			`-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 127.0.0.1 -j KUBE-NODEPORTS`,
		},
	}, {
		name:     "node port CIDR 0.0.0.0/0 is every address",
		opts:     iptables.Options{NodePortCIDRs: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}},
		contains: []string{"-m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS"},
	}, {
		name: "localhost node ports",
		opts: iptables.Options{LocalhostNodePorts: true},
		contains: []string{
			":KUBE-FIREWALL - [0:0]",
			`-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
			"-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS",
		},
	}, {
		// Upstream: localhost node ports never work on IPv6; the
		// addrtype LOCAL tail call leaves ::1 out and there is no
		// KUBE-FIREWALL rule, whatever LocalhostNodePorts says.
		name: "IPv6 leaves out localhost node ports",
		opts: iptables.Options{Family: corev1.IPv6Protocol, LocalhostNodePorts: true},
		contains: []string{
			`-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS`,
		},
		forbidden: []string{"127.0.0.0/8", "KUBE-FIREWALL"},
	}, {
		name: "IPv6 node port addresses skip loopback",
		opts: iptables.Options{Family: corev1.IPv6Protocol, LocalhostNodePorts: true,
			NodePortCIDRs:     []netip.Prefix{netip.MustParsePrefix("fd00:10::/64"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("127.0.0.0/8")},
			NodePortAddresses: []netip.Addr{netip.MustParseAddr("fd00:10::2"), netip.MustParseAddr("::1")}},
		contains: []string{
			`-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d fd00:10::2 -j KUBE-NODEPORTS`,
		},
		forbidden: []string{"-d ::1 -j", "KUBE-FIREWALL", "--dst-type LOCAL"},
	}, {
		name:     "IPv6 node port CIDRs of IPv4 only mean every address",
		opts:     iptables.Options{Family: corev1.IPv6Protocol, NodePortCIDRs: []netip.Prefix{netip.MustParsePrefix("192.168.0.0/24")}},
		contains: []string{"-m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS"},
	}, {
		name:     "IPv6 cluster CIDR detector",
		opts:     iptables.Options{Family: corev1.IPv6Protocol, ClusterCIDR: "fd00:10:244::/56"},
		contains: []string{"! -s fd00:10:244::/56 -j KUBE-MARK-MASQ"},
	}, {
		name:     "interface prefix detector",
		opts:     iptables.Options{ClusterCIDR: "10.244.0.0/16", LocalDetector: localtraffic.ByInterfaceNamePrefix("veth")},
		contains: []string{"--dport 80 ! -i veth+ -j KUBE-MARK-MASQ"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRenderer(t, c.opts)
			snap := clusterIPService(1).snapshot()
			if c.opts.Family == corev1.IPv6Protocol {
				snap = cluster{
					services: []*corev1.Service{ipv6Service("web", "fd00:10:96::20", 0)},
					slices:   []*discoveryv1.EndpointSlice{ipv6Slice("web", fixtures.Endpoint("fd00:10:244:1::1", testOtherNode))},
				}.ipv6Snapshot()
			}
			payload := string(r.Render(snap).Payload())
			for _, s := range c.contains {
				if !strings.Contains(payload, s) {
					t.Errorf("payload lacks %q:\n%s", s, payload)
				}
			}
			for _, s := range c.forbidden {
				if strings.Contains(payload, s) {
					t.Errorf("payload has %q:\n%s", s, payload)
				}
			}
		})
	}
}

func TestJumpRules(t *testing.T) {
	r := newRenderer(t, iptables.Options{})
	var lines []string
	for _, j := range r.JumpRules() {
		lines = append(lines, j.Table+" "+j.Chain+" "+strings.Join(j.Args(), " "))
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{
		"nat PREROUTING -m comment --comment kubernetes service portals -j KUBE-SERVICES",
		"nat OUTPUT -m comment --comment kubernetes service portals -j KUBE-SERVICES",
		"nat POSTROUTING -m comment --comment kubernetes postrouting rules -j KUBE-POSTROUTING",
		"filter FORWARD -m conntrack --ctstate NEW -m comment --comment kubernetes service portals -j KUBE-SERVICES",
		"filter INPUT -m comment --comment kubernetes health check service ports -j KUBE-NODEPORTS",
		"filter FORWARD -m comment --comment kubernetes forwarding rules -j KUBE-FORWARD",
		"filter OUTPUT -m conntrack --ctstate NEW -m comment --comment kubernetes load balancer firewall -j KUBE-PROXY-FIREWALL",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("JumpRules lacks %q; have\n%s", want, all)
		}
	}
	// Upstream ensures kubelet's KUBE-FIREWALL jumps too, with or without
	// localhost node ports.
	if len(r.JumpRules()) != 14 || !strings.Contains(all, "filter INPUT -j KUBE-FIREWALL") {
		t.Errorf("want upstream's 14 jumps with kubelet's KUBE-FIREWALL, got %d", len(r.JumpRules()))
	}
}
