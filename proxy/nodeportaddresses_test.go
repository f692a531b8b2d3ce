package proxy

import (
	"net"
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSelectNodePorts: nodePortAddresses split per family as upstream's
// NewNodePortAddresses and resolved against the node's addresses as
// GetNodeIPs; unset, or a /0 of the family, is every address (nil).
func TestSelectNodePorts(t *testing.T) {
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	nodeIPs := map[corev1.IPFamily]netip.Addr{v4: netip.MustParseAddr("192.168.0.10"), v6: netip.MustParseAddr("fd00:192::10")}
	ifaddrs := func() ([]net.Addr, error) {
		var out []net.Addr
		for _, s := range []string{"127.0.0.1/8", "::1/128", "192.168.0.10/24", "fd00:192::10/64", "10.244.1.1/24", "fe80::1/64"} {
			ip, n, _ := net.ParseCIDR(s)
			out = append(out, &net.IPNet{IP: ip, Mask: n.Mask})
		}
		return out, nil
	}
	tests := []struct {
		name      string
		entries   []string
		family    corev1.IPFamily
		cidrs     []string
		addresses []string
	}{
		{name: "unset", family: v4},
		{name: "unset IPv6", family: v6},
		{name: "only IPv4 CIDRs leave IPv6 on every address", entries: []string{"192.168.0.0/24"}, family: v6},
		{name: "IPv4 CIDR", entries: []string{"192.168.0.0/24", "fd00:192::/64"}, family: v4, cidrs: []string{"192.168.0.0/24"}, addresses: []string{"192.168.0.10"}},
		{name: "IPv6 CIDR", entries: []string{"192.168.0.0/24", "fd00:192::/64"}, family: v6, cidrs: []string{"fd00:192::/64"}, addresses: []string{"fd00:192::10"}},
		{name: "a zero CIDR matches all", entries: []string{"::/0", "fd00:192::/64"}, family: v6},
		{name: "primary is the node IP of each family", entries: []string{"primary"}, family: v6, cidrs: []string{"fd00:192::10/128"}, addresses: []string{"fd00:192::10"}},
		{name: "localhost", entries: []string{"localhost"}, family: v6, cidrs: []string{"::1/128"}, addresses: []string{"::1"}},
		{name: "no address in the CIDR", entries: []string{"fd00:9::/64"}, family: v6, cidrs: []string{"fd00:9::/64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := selectNodePorts(tt.entries, tt.family, nodeIPs, ifaddrs)
			if err != nil {
				t.Fatal(err)
			}
			var cidrs, addrs []string
			for _, c := range sel.CIDRs {
				cidrs = append(cidrs, c.String())
			}
			for _, a := range sel.Addresses {
				addrs = append(addrs, a.String())
			}
			if !reflect.DeepEqual(cidrs, tt.cidrs) || !reflect.DeepEqual(addrs, tt.addresses) {
				t.Errorf("selection = %v %v, want %v %v", cidrs, addrs, tt.cidrs, tt.addresses)
			}
		})
	}
}
