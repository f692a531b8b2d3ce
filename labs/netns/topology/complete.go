package topology

import (
	"net/netip"
	"slices"
)

// complete completes the lab's cluster subnets; completeNode and
// completeClient do its hosts.
//
// Completing turns what a lab writes for each address field (one value, or
// kind's comma form with one value per family) into one value per family
// of the lab, the primary first, and sets each single field (PodSubnet,
// Node.IP, …) to the list's first. The single fields win over the lists'
// first values, so a hand-built lab may set only those, and an edit of one
// is seen. What a lab may leave out:
//
//   - a cluster subnet of an ipv6 or dual lab: kind's default
//     (DefaultPodSubnetIPv6, …);
//   - a host's IPv6 address: derived from its IPv4 one
//     (DeriveIPv6HostIP);
//   - a node's IPv6 pod range: derived from its IPv4 one
//     (deriveIPv6PodCIDR).
//
// A value of IPv4 in an ipv6 lab serves only to derive from; a value of
// IPv6 in an ipv4 lab is a problem. The primary family of a dual lab is
// that of the first value of spec.podSubnet (IPv4 when it writes none),
// and spec.serviceSubnet must start with the same family.
func (v validator) complete(s *Spec) {
	fams := v.families(s)
	v.written.podSubnets = withPrimary(s.PodSubnets, s.PodSubnet)
	s.PodSubnets = v.familyList("spec.podSubnet", withPrimary(s.PodSubnets, s.PodSubnet), fams, subnetDefault(s, DefaultPodSubnetIPv4, DefaultPodSubnetIPv6))
	s.PodSubnet = first(s.PodSubnets)
	fams = v.families(s)
	written := withPrimary(s.ServiceSubnets, s.ServiceSubnet)
	s.ServiceSubnets = v.familyList("spec.serviceSubnet", written, fams, subnetDefault(s, DefaultServiceSubnetIPv4, DefaultServiceSubnetIPv6))
	s.ServiceSubnet = first(s.ServiceSubnets)
	if len(fams) == 2 && len(written) > 0 && written[0].IsValid() && FamilyOf(written[0].Addr()) != fams[0] && v.ok("spec.serviceSubnet") {
		v.add("spec.serviceSubnet", written[0].String(), "starts with %s, and spec.podSubnet with %s: write both with the primary family first", FamilyOf(written[0].Addr()), fams[0])
	}
}

// completeNode completes a node's addresses and pod ranges (see
// complete); hosts calls it in its turn, so that its problems come in
// the file's order. A node's ranges stay as written when spec.podSubnet
// has a problem: nothing can be derived from it.
func (v validator) completeNode(s *Spec, n *Node, path string) {
	fams := s.Families()
	ips := withPrimary(n.IPs, n.IP)
	n.IPs = v.familyList(path+".ip", ips, fams, hostIPDerivation(ips))
	n.IP = first(n.IPs)
	cidrs := withPrimary(n.PodCIDRs, n.PodCIDR)
	if !v.ok("spec.podSubnet") {
		n.PodCIDRs = cidrs
		return
	}
	n.PodCIDRs = v.familyList(path+".podCIDR", cidrs, fams, podCIDRDerivation(s, v.written.podSubnets, cidrs))
	n.PodCIDR = first(n.PodCIDRs)
}

// completeClient completes a client's addresses (see complete).
func (v validator) completeClient(s *Spec, c *Client, path string) {
	ips := withPrimary(c.IPs, c.IP)
	c.IPs = v.familyList(path+".ip", ips, s.Families(), hostIPDerivation(ips))
	c.IP = first(c.IPs)
}

// families checks spec.ipFamily and returns the lab's families, primary
// first: a dual lab's primary is the family of its first pod subnet
// (IPv4 when it has none yet). An unknown spec.ipFamily counts as ipv4
// for the other checks.
func (v validator) families(s *Spec) []IPFamily {
	switch s.IPFamily {
	case "", IPFamilyIPv4:
		return []IPFamily{IPFamilyIPv4}
	case IPFamilyIPv6:
		return []IPFamily{IPFamilyIPv6}
	case IPFamilyDual:
		if p := first(s.PodSubnets); p.IsValid() && p.Addr().Is6() {
			return []IPFamily{IPFamilyIPv6, IPFamilyIPv4}
		}
		return []IPFamily{IPFamilyIPv4, IPFamilyIPv6}
	default:
		v.add("spec.ipFamily", string(s.IPFamily), "unknown IP family (one of %s, or empty for ipv4)", list(IPFamilies()))
		return []IPFamily{IPFamilyIPv4}
	}
}

// withPrimary is what a lab wrote for a field: its list, whose first
// value is the single field's (a hand-built lab may set only that).
func withPrimary(list []netip.Prefix, primary netip.Prefix) []netip.Prefix {
	if len(list) == 0 {
		if !primary.IsValid() {
			return nil
		}
		return []netip.Prefix{primary}
	}
	out := slices.Clone(list)
	out[0] = primary
	return out
}

// A derivation gives the value of a family that a lab did not write, or
// false.
type derivation func(IPFamily) (netip.Prefix, bool)

// subnetDefault is kind's default subnet of a family, in an ipv6 or dual
// lab; an ipv4 lab has none (it must write its subnets).
func subnetDefault(s *Spec, v4, v6 netip.Prefix) derivation {
	return func(f IPFamily) (netip.Prefix, bool) {
		switch {
		case s.IPFamily != IPFamilyIPv6 && s.IPFamily != IPFamilyDual:
			return netip.Prefix{}, false
		case f == IPFamilyIPv4:
			return v4, true
		default:
			return v6, true
		}
	}
}

// hostIPDerivation derives a host's IPv6 address from the IPv4 one it
// wrote.
func hostIPDerivation(written []netip.Prefix) derivation {
	return func(f IPFamily) (netip.Prefix, bool) {
		v4 := OfFamily(written, IPFamilyIPv4)
		if f != IPFamilyIPv6 || !v4.IsValid() {
			return netip.Prefix{}, false
		}
		return DeriveIPv6HostIP(v4), true
	}
}

// podCIDRDerivation derives a node's IPv6 pod range from the IPv4 one it
// wrote, by its place in the IPv4 pod subnet the lab wrote.
func podCIDRDerivation(s *Spec, subnetsWritten, written []netip.Prefix) derivation {
	return func(f IPFamily) (netip.Prefix, bool) {
		v4, v4Subnet := OfFamily(written, IPFamilyIPv4), OfFamily(subnetsWritten, IPFamilyIPv4)
		v6Subnet := OfFamily(s.PodSubnets, IPFamilyIPv6)
		if s.IPFamily == IPFamilyIPv6 && !v4Subnet.IsValid() {
			v4Subnet = DefaultPodSubnetIPv4 // an ipv6 lab's nodes may write an IPv4 range of kind's IPv4 subnet
		}
		if f != IPFamilyIPv6 || !v4.IsValid() || !v4Subnet.IsValid() || !v6Subnet.IsValid() ||
			v4.Bits() < v4Subnet.Bits() || !v4Subnet.Contains(v4.Addr()) {
			return netip.Prefix{}, false
		}
		return deriveIPv6PodCIDR(v4, v4Subnet, v6Subnet)
	}
}

// familyList is the value of each family of fams that a field wrote or
// derive gives, in the order of fams. A field that did not parse stays as
// written (its checks say why). A list of more than one value per family,
// or of a family an ipv4 lab does not have, is a problem of field. A
// primary family with no value gives the list of one zero Prefix (its
// checks say it is required); a second family with none is a problem of
// field.
func (v validator) familyList(field string, written []netip.Prefix, fams []IPFamily, derive derivation) []netip.Prefix {
	if v.reported(field) || slices.ContainsFunc(written, func(p netip.Prefix) bool { return !p.IsValid() }) {
		return written
	}
	if len(written) > 2 {
		v.add(field, prefixList(written), "%d values: at most one per IP family", len(written))
		return written[:1]
	}
	if len(written) == 2 && FamilyOf(written[0].Addr()) == FamilyOf(written[1].Addr()) {
		v.add(field, prefixList(written), "two %s values: at most one per IP family", FamilyOf(written[0].Addr()))
		return written[:1]
	}
	for _, w := range written {
		if f := FamilyOf(w.Addr()); !slices.Contains(fams, f) && f == IPFamilyIPv6 {
			v.add(field, w.String(), "IPv6 in an ipv4 lab (set spec.ipFamily to ipv6 or dual)")
			return written[:1]
		}
	}
	out := make([]netip.Prefix, 0, len(fams))
	for i, f := range fams {
		p := OfFamily(written, f)
		if !p.IsValid() {
			p, _ = derive(f)
		}
		if !p.IsValid() && i == 0 {
			return []netip.Prefix{p} // required: its checks say so
		}
		if !p.IsValid() {
			v.add(field, prefixList(written), "no %s value: a %s lab needs one per IP family (write both, comma-separated, the primary first)", f, IPFamilyDual)
			continue
		}
		out = append(out, p)
	}
	return out
}

// prefixList writes a list in kind's comma form.
func prefixList(list []netip.Prefix) string {
	s := ""
	for i, p := range list {
		if i > 0 {
			s += ","
		}
		s += p.String()
	}
	return s
}
