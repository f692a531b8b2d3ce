package proxy

import (
	"errors"
	"log/slog"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
)

// hostWith are familyChecks of a host whose iptables runs for the
// families in iptables and whose kernel has IPv6 when ipv6 is true.
func hostWith(ipv6 bool, iptables ...corev1.IPFamily) familyChecks {
	return familyChecks{
		iptablesPresent: func(f corev1.IPFamily) error {
			for _, g := range iptables {
				if g == f {
					return nil
				}
			}
			return errors.New("exec: ip6tables: not found")
		},
		kernelIPv6: func() (bool, string) { return ipv6, "Kernel support disabled for family" },
	}
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// TestDecideFamilies: the families are upstream's newProxyServer's — the
// primary from the first node IP (or bindAddress), dual-stack whenever the
// mode and kernel do both families, whatever the node's addresses — except
// that a lab node runs the second family only when it has an address of
// it, so an IPv4 lab's node stays IPv4 only.
func TestDecideFamilies(t *testing.T) {
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	both := hostWith(true, v4, v6)
	tests := []struct {
		name      string
		mode      config.Mode
		nodeIPs   []netip.Addr
		bind      string
		lab       bool
		checks    familyChecks
		primary   corev1.IPFamily
		secondary corev1.IPFamily
		nodeIP    string // the primary family's node IP
		err       string
	}{
		{name: "IPv4 lab node", mode: config.ModeNFTables, nodeIPs: addrs("172.18.0.2"), lab: true, checks: both, primary: v4, nodeIP: "172.18.0.2"},
		{name: "lab node without IPs is IPv4", mode: config.ModeIPTables, lab: true, checks: both, primary: v4, nodeIP: "127.0.0.1"},
		{name: "dual-stack lab node", mode: config.ModeIPTables, nodeIPs: addrs("172.18.0.2", "fc00:f853:ccd:e793::2"), lab: true, checks: both, primary: v4, secondary: v6, nodeIP: "172.18.0.2"},
		{name: "IPv6 lab node", mode: config.ModeNFTables, nodeIPs: addrs("fc00:f853:ccd:e793::2"), lab: true, checks: both, primary: v6, nodeIP: "fc00:f853:ccd:e793::2"},
		{name: "IPv6-primary dual-stack lab node", mode: config.ModeNFTables, nodeIPs: addrs("fc00::2", "172.18.0.2"), lab: true, checks: both, primary: v6, secondary: v4, nodeIP: "fc00::2"},
		{name: "cluster IPv4 node on a dual-capable kernel runs dual-stack, as upstream", mode: config.ModeIPTables, nodeIPs: addrs("172.18.0.2"), checks: both, primary: v4, secondary: v6, nodeIP: "172.18.0.2"},
		{name: "kernel without IPv6", mode: config.ModeNFTables, nodeIPs: addrs("172.18.0.2", "fc00::2"), checks: hostWith(false, v4, v6), primary: v4, nodeIP: "172.18.0.2"},
		{name: "no ip6tables", mode: config.ModeIPTables, nodeIPs: addrs("172.18.0.2", "fc00::2"), checks: hostWith(true, v4), primary: v4, nodeIP: "172.18.0.2"},
		{name: "nftables needs no ip6tables", mode: config.ModeNFTables, nodeIPs: addrs("172.18.0.2", "fc00::2"), checks: hostWith(true, v4), primary: v4, secondary: v6, nodeIP: "172.18.0.2"},
		{name: "bindAddress overrides the primary", mode: config.ModeNFTables, nodeIPs: addrs("172.18.0.2", "fc00::2"), bind: "fc00::9", lab: true, checks: both, primary: v6, secondary: v4, nodeIP: "fc00::9"},
		{name: "unspecified bindAddress is ignored", mode: config.ModeNFTables, nodeIPs: addrs("172.18.0.2"), bind: "0.0.0.0", lab: true, checks: both, primary: v4, nodeIP: "172.18.0.2"},
		{name: "IPv6 primary without IPv6", mode: config.ModeNFTables, nodeIPs: addrs("fc00::2"), checks: hostWith(false, v4, v6), err: `no support for primary IP family "IPv6"`},
		{name: "no iptables at all", mode: config.ModeIPTables, nodeIPs: addrs("172.18.0.2"), checks: hostWith(true), err: "iptables is not available on this host : exec: ip6tables: not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decideFamilies(tt.mode, tt.nodeIPs, tt.bind, tt.lab, tt.checks, slog.New(slog.DiscardHandler))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Primary != tt.primary || got.Secondary != tt.secondary {
				t.Errorf("families = %s + %q, want %s + %q", got.Primary, got.Secondary, tt.primary, tt.secondary)
			}
			if ip := got.NodeIPs[got.Primary].String(); ip != tt.nodeIP {
				t.Errorf("primary node IP = %s, want %s", ip, tt.nodeIP)
			}
		})
	}
}

// TestNodeHostIPs: upstream's GetNodeHostIPs — InternalIPs before
// ExternalIPs, the first address and the first of the other family.
func TestNodeHostIPs(t *testing.T) {
	node := &corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: "kind-worker"},
		{Type: corev1.NodeExternalIP, Address: "fc00::1"},
		{Type: corev1.NodeInternalIP, Address: "172.18.0.2"},
		{Type: corev1.NodeInternalIP, Address: "172.18.0.3"},
	}}}
	got := nodeHostIPs(node)
	if want := addrs("172.18.0.2", "fc00::1"); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("nodeHostIPs = %v, want %v", got, want)
	}
	if got := nodeHostIPs(&corev1.Node{}); got != nil {
		t.Errorf("nodeHostIPs of a node without addresses = %v, want none", got)
	}
}

// TestCheckBadIPConfig: cluster CIDRs only of the family the proxy does
// not run stop a single-stack proxy with upstream's message, and are only
// logged on a dual-stack one.
func TestCheckBadIPConfig(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	cfgWith := func(cidr string) config.Config {
		c, err := config.Parse("config.conf", []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: "+cidr+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ipv6Only := proxyFamilies{Primary: corev1.IPv6Protocol}
	err := checkBadIPConfig(cfgWith("10.244.0.0/16"), ipv6Only, log)
	if want := "kube-proxy configuration is incorrect: cluster is IPv6-only but clusterCIDRs contains only IPv4 addresses"; err == nil || err.Error() != want {
		t.Errorf("IPv6-only proxy with an IPv4 clusterCIDR: %v, want %q", err, want)
	}
	dual := proxyFamilies{Primary: corev1.IPv6Protocol, Secondary: corev1.IPv4Protocol}
	if err := checkBadIPConfig(cfgWith("10.244.0.0/16"), dual, log); err != nil {
		t.Errorf("dual-stack proxy: %v, want only a log line", err)
	}
	for _, cidr := range []string{"fd00:10:244::/56", "10.244.0.0/16,fd00:10:244::/56"} {
		if err := checkBadIPConfig(cfgWith(cidr), ipv6Only, log); err != nil {
			t.Errorf("clusterCIDR %s on an IPv6-only proxy: %v", cidr, err)
		}
	}
	if err := checkBadIPConfig(cfgWith("10.244.0.0/16"), proxyFamilies{Primary: corev1.IPv4Protocol}, log); err != nil {
		t.Errorf("IPv4 proxy, IPv4 clusterCIDR: %v", err)
	}
}
