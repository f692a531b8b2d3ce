package ipvs

import (
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/iptables/localtraffic"
	"github.com/svclab/svclab/proxy/model"
)

// The fuzz targets' IPv6 inputs: modeltest.Generate rarely makes IPv6
// Services with IPv6 endpoints, so each generated IPv4 snapshot is also
// carried over to IPv6 whole, every address a.b.c.d becoming
// fd00::a.b.c.d (fd00::/96 plus the IPv4 bits) and every prefix keeping
// its host part — the same services, endpoints, node ports, source ranges
// and node addresses, in IPv6.

// to6 is a in fd00::/96 (an IPv6 address stays as it is).
func to6(a netip.Addr) netip.Addr {
	if !a.Is4() {
		return a
	}
	b := netip.MustParseAddr("fd00::").As16()
	v4 := a.As4()
	copy(b[12:], v4[:])
	return netip.AddrFrom16(b)
}

// prefix6 is p in fd00::/96, with the same host bits.
func prefix6(p netip.Prefix) netip.Prefix {
	if !p.Addr().Is4() {
		return p
	}
	return netip.PrefixFrom(to6(p.Addr()), p.Bits()+96)
}

// snapshotToIPv6 is snap with every address carried over by to6.
func snapshotToIPv6(snap *model.Snapshot) *model.Snapshot {
	out := &model.Snapshot{NodeName: snap.NodeName, Family: corev1.IPv6Protocol}
	for _, sp := range snap.ServicePorts {
		c := *sp
		c.ClusterIP = to6(sp.ClusterIP)
		c.ExternalIPs = mapAll(sp.ExternalIPs, to6)
		c.LoadBalancerVIPs = mapAll(sp.LoadBalancerVIPs, to6)
		c.LoadBalancerSourceRanges = mapAll(sp.LoadBalancerSourceRanges, prefix6)
		c.Endpoints = slices.Clone(sp.Endpoints)
		for i := range c.Endpoints {
			c.Endpoints[i].IP = to6(c.Endpoints[i].IP)
		}
		slices.SortFunc(c.Endpoints, func(a, b model.Endpoint) int { return strings.Compare(a.String(), b.String()) })
		out.ServicePorts = append(out.ServicePorts, &c)
	}
	return out
}

// settingsToIPv6 is s for the IPv6 proxier, its addresses carried over by
// to6 and its pod range by prefix6.
func settingsToIPv6(s Settings) Settings {
	s.Family = corev1.IPv6Protocol
	s.NodeAddresses = mapAll(s.NodeAddresses, to6)
	s.NodePortCIDRs = mapAll(s.NodePortCIDRs, prefix6)
	if s.NodeIP.IsValid() {
		s.NodeIP = to6(s.NodeIP)
	}
	if s.LocalDetector != nil {
		d, err := localtraffic.ByCIDR(prefix6(prefix(clusterPod)).String())
		if err != nil {
			panic(err)
		}
		s.LocalDetector = d
	}
	return s
}

func mapAll[T any](in []T, f func(T) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
