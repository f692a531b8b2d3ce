package upstream

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// DualStack is the value of options.ipFamily that runs a case through both
// families' proxiers (upstream's metaproxier runs one per family), each
// compared with svclab's render of the same family.
const DualStack = "DualStack"

// DefaultNodeIPv6 is the IPv6 node address of every case that runs IPv6
// unless it sets nodeIPv6 (or, IPv6 only, nodeIP); the test's network
// namespace has it on lo.
const DefaultNodeIPv6 = "fd00:192:168::10"

// Families are the IP families c runs through: options.ipFamily, IPv4
// when it is empty, both for DualStack (IPv4 first).
func (c *Case) Families() []corev1.IPFamily {
	switch c.Options.IPFamily {
	case "", string(corev1.IPv4Protocol):
		return []corev1.IPFamily{corev1.IPv4Protocol}
	case string(corev1.IPv6Protocol):
		return []corev1.IPFamily{corev1.IPv6Protocol}
	}
	return []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
}

// ForFamily is c as one family's proxier sees it: the same objects, the
// options narrowed to family (see Options.ForFamily).
func (c *Case) ForFamily(family corev1.IPFamily) *Case {
	out := *c
	out.Options = c.Options.ForFamily(family)
	return &out
}

// ForFamily narrows o to one family's proxier, as kube-proxy's server
// splits its flags: Family set, NodeIP the node's address of the family,
// ClusterCIDR the --cluster-cidr entry of the family (none: no detector).
// --nodeport-addresses and ServiceCIDRs stay whole; both proxiers keep
// their own family's entries.
func (o Options) ForFamily(family corev1.IPFamily) Options {
	o.Family = family
	if family == corev1.IPv6Protocol {
		o.NodeIP = o.NodeIPv6
	}
	all := o.ClusterCIDR
	o.ClusterCIDR = ""
	for _, s := range strings.Split(all, ",") {
		if p, err := netip.ParsePrefix(s); err == nil && o.ofFamily(p.Addr()) {
			o.ClusterCIDR = s
			break
		}
	}
	return o
}

// family is Family with the zero value spelled IPv4.
func (o Options) family() corev1.IPFamily {
	if o.Family == "" {
		return corev1.IPv4Protocol
	}
	return o.Family
}

// isIPv6 reports whether o is an IPv6 proxier's view.
func (o Options) isIPv6() bool { return o.Family == corev1.IPv6Protocol }

// ofFamily reports whether a is an address of o's family.
func (o Options) ofFamily(a netip.Addr) bool { return a.Unmap().Is6() == o.isIPv6() }

// settleFamilies checks options.ipFamily and fills in the node addresses'
// defaults.
func (o *Options) settleFamilies() error {
	switch o.IPFamily {
	case "", string(corev1.IPv4Protocol), string(corev1.IPv6Protocol), DualStack:
	default:
		return fmt.Errorf("options.ipFamily %q: want IPv4, IPv6 or %s", o.IPFamily, DualStack)
	}
	if o.IPFamily == string(corev1.IPv6Protocol) && o.NodeIPv6 == "" && o.NodeIP != "" {
		o.NodeIPv6 = o.NodeIP
	}
	if o.NodeIP == "" {
		o.NodeIP = DefaultNodeIP
	}
	if o.NodeIPv6 == "" {
		o.NodeIPv6 = DefaultNodeIPv6
	}
	for name, s := range map[string]string{"nodeIP": o.NodeIP, "nodeIPv6": o.NodeIPv6} {
		if _, err := netip.ParseAddr(s); err != nil {
			return fmt.Errorf("options.%s: %w", name, err)
		}
	}
	if a := netip.MustParseAddr(o.NodeIPv6); !a.Is6() {
		return fmt.Errorf("options.nodeIPv6 %s: not an IPv6 address", a)
	}
	for _, s := range strings.Split(o.ClusterCIDR, ",") {
		if _, err := netip.ParsePrefix(s); s != "" && err != nil {
			return fmt.Errorf("options.clusterCIDR: %w", err)
		}
	}
	return nil
}
