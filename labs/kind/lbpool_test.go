package kind

import (
	"net/netip"
	"testing"
)

func TestLoadBalancerPool(t *testing.T) {
	for _, tc := range []struct {
		subnet      string
		taken       []string
		pool, route string
	}{
		{"172.18.0.0/16", nil, "172.18.255.224-172.18.255.254", "172.18.255.224/27"},
		{"172.18.0.0/16", []string{"172.18.255.224-172.18.255.254"}, "172.18.255.192/27", "172.18.255.192/27"},
		{"172.18.0.0/16", []string{"172.18.255.224-172.18.255.254", "172.18.255.192/27"}, "172.18.255.160/27", "172.18.255.160/27"},
		{"10.89.0.0/24", nil, "10.89.0.224-10.89.0.254", "10.89.0.224/27"},
	} {
		pool, route, err := LoadBalancerPool(netip.MustParsePrefix(tc.subnet), tc.taken)
		if err != nil || pool.String() != tc.pool || route.String() != tc.route {
			t.Errorf("LoadBalancerPool(%s, %v) = %s, %s, %v; want %s, %s", tc.subnet, tc.taken, pool, route, err, tc.pool, tc.route)
		}
	}
	all := []string{"172.18.255.224/27", "172.18.255.192/27", "172.18.255.160/27", "172.18.255.128/27"}
	if _, _, err := LoadBalancerPool(netip.MustParsePrefix("172.18.0.0/16"), all); err == nil {
		t.Errorf("a fifth cluster got a pool: want an error")
	}
	for _, bad := range []string{"172.18.0.0/25", "fc00:f853:ccd:e793::/64"} {
		if _, _, err := LoadBalancerPool(netip.MustParsePrefix(bad), nil); err == nil {
			t.Errorf("LoadBalancerPool(%s): want an error", bad)
		}
	}
}
