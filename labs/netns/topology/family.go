package topology

import (
	"net/netip"
)

// IPFamily is the lab's IP family (spec.ipFamily), with kind's field name
// and values (kind's v1alpha4 Networking.IPFamily). IPFamilyIPv4 and
// IPFamilyIPv6 also name one family of a dual-stack lab.
type IPFamily string

const (
	// IPFamilyIPv4 is a single-stack IPv4 lab; an empty spec.ipFamily
	// means this one.
	IPFamilyIPv4 IPFamily = "ipv4"
	// IPFamilyIPv6 is a single-stack IPv6 lab.
	IPFamilyIPv6 IPFamily = "ipv6"
	// IPFamilyDual is a dual-stack lab: every host, node range and
	// cluster subnet in both families, the primary one first.
	IPFamilyDual IPFamily = "dual"
)

// IPFamilies lists the values spec.ipFamily may take.
func IPFamilies() []IPFamily { return []IPFamily{IPFamilyIPv4, IPFamilyIPv6, IPFamilyDual} }

// FamilyOf is the family of an address: IPFamilyIPv4 or IPFamilyIPv6.
func FamilyOf(a netip.Addr) IPFamily {
	if a.Is4() {
		return IPFamilyIPv4
	}
	return IPFamilyIPv6
}

// kind's defaults for the subnets of a family (kind's
// SetDefaultsCluster): a lab of that family that does not write one gets
// it. A single-stack IPv4 lab must write its subnets, as it always had to.
var (
	DefaultPodSubnetIPv4     = netip.MustParsePrefix("10.244.0.0/16")
	DefaultServiceSubnetIPv4 = netip.MustParsePrefix("10.96.0.0/16")
	DefaultPodSubnetIPv6     = netip.MustParsePrefix("fd00:10:244::/56")
	DefaultServiceSubnetIPv6 = netip.MustParsePrefix("fd00:10:96::/112")
)

// NodePodCIDRBitsIPv6 is the length of a node's IPv6 pod range, as
// kube-controller-manager's default --node-cidr-mask-size-ipv6.
const NodePodCIDRBitsIPv6 = 64

// DerivedIPv6Prefix is where a host's IPv6 underlay address comes from
// when the lab file writes only its IPv4 one: the IPv4 address embedded in
// the low 32 bits of fd00::/96, the subnet length grown by 96, so hosts
// that share an IPv4 subnet share the IPv6 one and hosts that do not, do
// not. 192.168.16.73/20 becomes fd00::c0a8:1049/116.
var DerivedIPv6Prefix = netip.MustParsePrefix("fd00::/96")

// DeriveIPv6HostIP is the IPv6 address of a host whose lab file writes
// only the IPv4 address ip (see DerivedIPv6Prefix). The lab's router
// derives its own IPv6 gateway address the same way.
func DeriveIPv6HostIP(ip netip.Prefix) netip.Prefix {
	return netip.PrefixFrom(DeriveIPv6Addr(ip.Addr()), 96+ip.Bits())
}

// DeriveIPv6Addr embeds an IPv4 address in DerivedIPv6Prefix.
func DeriveIPv6Addr(a netip.Addr) netip.Addr {
	b := DerivedIPv6Prefix.Addr().As16()
	v4 := a.As4()
	copy(b[12:], v4[:])
	return netip.AddrFrom16(b)
}

// deriveIPv6PodCIDR is the IPv6 pod range of a node whose lab file writes
// only its IPv4 one: the node's IPv4 range is range number i of its length
// in the IPv4 pod subnet (10.244.3.0/24 in 10.244.0.0/16 is number 3), and
// its IPv6 range is /64 number i of the IPv6 pod subnet
// (fd00:10:244:3::/64 in fd00:10:244::/56). ok is false when the IPv6
// subnet has no range number i.
func deriveIPv6PodCIDR(v4Range, v4Subnet, v6Subnet netip.Prefix) (netip.Prefix, bool) {
	base, own := v4Subnet.Addr().As4(), v4Range.Addr().As4()
	offset := be32(own) - be32(base)
	i := uint64(offset) >> (32 - v4Range.Bits())
	room := NodePodCIDRBitsIPv6 - v6Subnet.Bits()
	if room < 0 || (room < 64 && i >= 1<<room) {
		return netip.Prefix{}, false
	}
	b := v6Subnet.Addr().As16()
	hi := uint64(0)
	for _, x := range b[:8] {
		hi = hi<<8 | uint64(x)
	}
	hi |= i
	for k := 7; k >= 0; k-- {
		b[k] = byte(hi)
		hi >>= 8
	}
	return netip.PrefixFrom(netip.AddrFrom16(b), NodePodCIDRBitsIPv6), true
}

func be32(b [4]byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Families are the lab's IP families, the primary one first: its pod
// subnets' families once Parse or Validate completed them, or the family
// spec.ipFamily names (IPv4 first in a dual lab) before.
func (s *Spec) Families() []IPFamily {
	if len(s.PodSubnets) > 0 && s.PodSubnets[0].IsValid() {
		out := make([]IPFamily, 0, 2)
		for _, p := range s.PodSubnets {
			out = append(out, FamilyOf(p.Addr()))
		}
		return out
	}
	switch s.IPFamily {
	case IPFamilyIPv6:
		return []IPFamily{IPFamilyIPv6}
	case IPFamilyDual:
		return []IPFamily{IPFamilyIPv4, IPFamilyIPv6}
	default:
		return []IPFamily{IPFamilyIPv4}
	}
}

// HasIPv6 says whether the lab has IPv6 (an ipv6 or a dual lab).
func (s *Spec) HasIPv6() bool {
	return s.IPFamily == IPFamilyIPv6 || s.IPFamily == IPFamilyDual
}

// OfFamily is the prefix of family f in a list (primary first), or the
// zero Prefix.
func OfFamily(list []netip.Prefix, f IPFamily) netip.Prefix {
	for _, p := range list {
		if p.IsValid() && FamilyOf(p.Addr()) == f {
			return p
		}
	}
	return netip.Prefix{}
}
