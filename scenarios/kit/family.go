package kit

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// FamilyOf is the IP family of an address (IPv4 for an IPv4-mapped one,
// as the kernel routes it).
func FamilyOf(a netip.Addr) corev1.IPFamily {
	if a.Is4() || a.Is4In6() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// IsIPv6 says whether family is IPv6; "" is IPv4 (a single-stack
// IPv4 cluster's objects name none).
func IsIPv6(family corev1.IPFamily) bool { return family == corev1.IPv6Protocol }

// FirstOfFamily is the first of addrs that parses as an address of
// family; false when none does.
func FirstOfFamily(addrs []string, family corev1.IPFamily) (netip.Addr, bool) {
	for _, s := range addrs {
		a, err := netip.ParseAddr(s)
		if err == nil && FamilyOf(a) == familyOrIPv4(family) {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// FirstPrefixOfFamily is the first of prefixes of family; false when
// none is.
func FirstPrefixOfFamily(prefixes []string, family corev1.IPFamily) (netip.Prefix, bool) {
	for _, s := range prefixes {
		p, err := netip.ParsePrefix(s)
		if err == nil && FamilyOf(p.Addr()) == familyOrIPv4(family) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// HostPrefixLen is the prefix length of one address of family: 32 or
// 128, as iptables-save writes a host (-d 10.96.0.10/32, fd00::a/128).
func HostPrefixLen(family corev1.IPFamily) int {
	if IsIPv6(family) {
		return 128
	}
	return 32
}

// familyOrIPv4 is family, IPv4 when it is "".
func familyOrIPv4(family corev1.IPFamily) corev1.IPFamily {
	if family == "" {
		return corev1.IPv4Protocol
	}
	return family
}

// FamilyOrIPv4 is family, IPv4 when it is "" (a single-stack IPv4
// cluster's objects name none).
func FamilyOrIPv4(family corev1.IPFamily) corev1.IPFamily { return familyOrIPv4(family) }
