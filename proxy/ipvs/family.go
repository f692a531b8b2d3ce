package ipvs

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// What tells the IPv6 proxier from the IPv4 one. Upstream runs one
// Proxier per family (NewDualStackProxier); they share the kernel's IPVS
// table, kube-ipvs0 and the sysctls, and each keeps to the addresses,
// ipsets and iptables of its own family.

// isIPv6 reports whether family is IPv6 ("" is IPv4).
func isIPv6(family corev1.IPFamily) bool { return family == corev1.IPv6Protocol }

// inFamily reports whether a is an address of family.
func inFamily(family corev1.IPFamily, a netip.Addr) bool { return a.Is6() == isIPv6(family) }

// ofFamily keeps the addresses of family, in their order.
func ofFamily(family corev1.IPFamily, addrs []netip.Addr) []netip.Addr {
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if inFamily(family, a) {
			out = append(out, a)
		}
	}
	return out
}

// setNameLimit is the longest ipset name the kernel takes
// (IPSET_MAXNAMELEN - 1).
const setNameLimit = 31

// familySetName is the name of the set called name (an IPv4 name of Sets)
// in family: the IPv6 proxier's sets are KUBE-6-*, cut to 31 characters
// (KUBE-6-LOAD-BALANCER-SOURCE-CID), so both families' sets live side by
// side. Upstream: NewIPSet.
func familySetName(family corev1.IPFamily, name string) string {
	if !isIPv6(family) || !strings.HasPrefix(name, "KUBE-") {
		return name
	}
	name = "KUBE-6-" + strings.TrimPrefix(name, "KUBE-")
	if len(name) > setNameLimit {
		name = name[:setNameLimit]
	}
	return name
}

// sets6 are Sets with the IPv6 proxier's names.
var sets6 = func() []SetSpec {
	out := make([]SetSpec, len(Sets))
	for i, s := range Sets {
		s.Name = familySetName(corev1.IPv6Protocol, s.Name)
		out[i] = s
	}
	return out
}()

// setsOf are the sets the proxier of family creates, in Sets order.
func setsOf(family corev1.IPFamily) []SetSpec {
	if isIPv6(family) {
		return sets6
	}
	return Sets
}

// setFamily is the ipset family of family's sets (inet6 for IPv6).
func setFamily(family corev1.IPFamily) kernel.Family {
	if isIPv6(family) {
		return kernel.Inet6
	}
	return kernel.Inet
}

// loopbackCIDR is the range of the node's loopback addresses; upstream's
// loAddr.
func loopbackCIDR(family corev1.IPFamily) string {
	if isIPv6(family) {
		return "::1/128"
	}
	return "127.0.0.0/8"
}

// iptablesCommand is the command of family's tables: iptables or
// ip6tables.
func iptablesCommand(family corev1.IPFamily) string {
	if isIPv6(family) {
		return "ip6tables"
	}
	return "iptables"
}

// ipCommandFlag is the family flag of the ip command: -4 or -6.
func ipCommandFlag(family corev1.IPFamily) string {
	if isIPv6(family) {
		return "-6"
	}
	return "-4"
}
