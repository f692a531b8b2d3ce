package topology

import (
	"net/netip"
	"slices"
	"testing"
)

func TestLoadBalancerPool(t *testing.T) {
	for _, tc := range []struct {
		pool        string
		first, last string
		prefixes    []string
	}{
		{"192.168.100.0/28", "192.168.100.0", "192.168.100.15", []string{"192.168.100.0/28"}},
		{"192.168.100.10-192.168.100.20", "192.168.100.10", "192.168.100.20",
			[]string{"192.168.100.10/31", "192.168.100.12/30", "192.168.100.16/30", "192.168.100.20/32"}},
		{"192.168.100.7-192.168.100.7", "192.168.100.7", "192.168.100.7", []string{"192.168.100.7/32"}},
	} {
		doc := edit(t, "  clients:\n", "  loadBalancer: {pool: "+tc.pool+"}\n  clients:\n")
		lab, err := Parse([]byte(doc), "x.yaml")
		if err != nil {
			t.Fatalf("%s: %v", tc.pool, err)
		}
		pool := lab.Spec.LoadBalancer.Pool
		if pool.First != netip.MustParseAddr(tc.first) || pool.Last != netip.MustParseAddr(tc.last) {
			t.Errorf("%s: pool = %v", tc.pool, pool)
		}
		var got []string
		for _, p := range pool.Prefixes() {
			got = append(got, p.String())
		}
		if !slices.Equal(got, tc.prefixes) {
			t.Errorf("%s: prefixes = %v, want %v", tc.pool, got, tc.prefixes)
		}
	}
}

func TestRoutedBlockErrors(t *testing.T) {
	lb := func(pool string) string {
		return edit(t, "  clients:\n", "  loadBalancer: {pool: \""+pool+"\"}\n  clients:\n")
	}
	ext := func(blocks string) string {
		return edit(t, "  clients:\n", "  loadBalancer: {pool: 192.168.100.0/28}\n  externalIPs: "+blocks+"\n  clients:\n")
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"garbage", lb("x"), `topology x.yaml: spec.loadBalancer.pool "x": invalid CIDR or range (write e.g. 192.168.100.0/28 or 192.168.100.10-192.168.100.20)`},
		{"reversed", lb("192.168.100.20-192.168.100.10"), `topology x.yaml: spec.loadBalancer.pool "192.168.100.20-192.168.100.10": invalid range: 192.168.100.20 comes after 192.168.100.10`},
		{"ipv6 in range", lb("fd00::1-fd00::2"), `topology x.yaml: spec.loadBalancer.pool "fd00::1-fd00::2": invalid range: "fd00::1" is not an IPv4 address (write first-last, e.g. 192.168.100.10-192.168.100.20, or a CIDR)`},
		{"ipv6", lb("fd00::/120"), `topology x.yaml: spec.loadBalancer.pool "fd00::/120": only IPv4 is supported`},
		{"not a network", lb("192.168.100.3/28"), `topology x.yaml: spec.loadBalancer.pool "192.168.100.3/28": not a network address (did you mean 192.168.100.0/28?)`},
		{"too large", lb("100.64.0.0/15"), `topology x.yaml: spec.loadBalancer.pool "100.64.0.0/15": 131072 addresses: at most 65536 (a /16)`},
		{"loopback", lb("127.0.0.0/24"), `topology x.yaml: spec.loadBalancer.pool "127.0.0.0/24": holds loopback (127.0.0.0/8) addresses, which no Service may have`},
		{"link-local", lb("169.254.0.10-169.254.0.20"), `topology x.yaml: spec.loadBalancer.pool "169.254.0.10-169.254.0.20": holds link-local (169.254.0.0/16) addresses, which no Service may have`},
		{"pods", lb("10.244.9.0/24"), `topology x.yaml: spec.loadBalancer.pool "10.244.9.0/24": overlaps spec.podSubnet 10.244.0.0/16`},
		{"services", lb("10.96.9.0/24"), `topology x.yaml: spec.loadBalancer.pool "10.96.9.0/24": overlaps spec.serviceSubnet 10.96.0.0/16`},
		{"host subnet", lb("192.168.55.10-192.168.55.20"), `topology x.yaml: spec.loadBalancer.pool "192.168.55.10-192.168.55.20": overlaps subnet 192.168.55.0/24 of spec.clients[0].ip: the router could not tell a host from a Service`},
		{"host subnet inside the pool", lb("192.168.0.0/16"), `topology x.yaml: spec.loadBalancer.pool "192.168.0.0/16": overlaps subnet 192.168.16.0/20 of spec.nodes[0].ip: the router could not tell a host from a Service`},
		{"external empty", ext(`[""]`), `topology x.yaml: spec.externalIPs[0]: required (a CIDR such as 203.0.113.0/24)`},
		{"external bad", ext(`[203.0.113.0/33]`), `topology x.yaml: spec.externalIPs[0] "203.0.113.0/33": invalid CIDR`},
		{"external not a network", ext(`[203.0.113.1/24]`), `topology x.yaml: spec.externalIPs[0] "203.0.113.1/24": not a network address (did you mean 203.0.113.0/24?)`},
		{"external overlaps pool", ext(`[203.0.113.0/24, 192.168.100.8/29]`), `topology x.yaml: spec.externalIPs[1] "192.168.100.8/29": overlaps spec.loadBalancer.pool 192.168.100.0/28`},
		{"external multicast", ext(`[239.1.0.0/16]`), `topology x.yaml: spec.externalIPs[0] "239.1.0.0/16": holds multicast (224.0.0.0/4) addresses, which no Service may have`},
		{"unknown field", edit(t, "  clients:\n", "  loadBalancer: {pools: [a]}\n  clients:\n"), `topology x.yaml: spec.loadBalancer.pools: unknown field (known fields here: pool)`},
	} {
		_, err := Parse([]byte(tc.doc), "x.yaml")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.want)
		}
	}
}
