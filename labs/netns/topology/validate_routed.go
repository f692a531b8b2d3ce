package topology

import (
	"fmt"
	"net/netip"

	"github.com/svclab/svclab/labs/podnet"
)

// specialBlocks are addresses a Service's external address may not have:
// the API server refuses unspecified, loopback, link-local and link-local
// multicast external IPs (ValidateEndpointIP); multicast and the reserved
// class E (with the broadcast address) cannot be routed to a host either.
var specialBlocks = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (127.0.0.0/8)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (169.254.0.0/16)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (224.0.0.0/4)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
}

// A routedBlock is an address range the lab's router sends to the
// cluster, and the field that declared it.
type routedBlock struct {
	field string
	r     podnet.AddrRange
}

// routedBlocks checks spec.loadBalancer.pool and spec.externalIPs, the
// addresses the lab's router sends to the cluster: IPv4, no special
// addresses, and overlapping nothing else of the lab (the pod and service
// subnets, the hosts' subnets, each other), since the router could not
// tell where to send an address that is both.
func (v validator) routedBlocks(s *Spec, hostSubnets *prefixSet) {
	var blocks []routedBlock
	if b, ok := v.pool(s.LoadBalancer.Pool); ok {
		blocks = append(blocks, b)
	}
	if s.IPFamily == IPFamilyIPv6 {
		v.ipv4OnlyBlocks(s)
		return
	}
	for i, p := range s.ExternalIPs {
		field := fmt.Sprintf("spec.externalIPs[%d]", i)
		if v.subnet(field, p) {
			blocks = append(blocks, routedBlock{field, podnet.RangeOf(p)})
		}
	}
	plan := v.planSubnets(s)
	for i, b := range blocks {
		v.routedBlockApart(b, blocks[:i], plan, hostSubnets)
	}
}

// ipv4OnlyBlocks refuses the routed blocks of an ipv6 lab: they are
// IPv4 (only IPv4 is supported) and the lab has no IPv4 to reach them by.
func (v validator) ipv4OnlyBlocks(s *Spec) {
	const why = "an ipv6 lab has no IPv4 route to its nodes (use a dual lab)"
	if pool := s.LoadBalancer.Pool; pool != (podnet.AddrRange{}) && v.ok("spec.loadBalancer.pool") {
		v.add("spec.loadBalancer.pool", pool.String(), "%s", why)
	}
	for i, p := range s.ExternalIPs {
		if field := fmt.Sprintf("spec.externalIPs[%d]", i); v.subnet(field, p) {
			v.add(field, p.String(), "%s", why)
		}
	}
}

// pool checks spec.loadBalancer.pool on its own (an IPv4 range of at most
// MaxPoolAddrs) and returns it as a block when it is set and passes.
func (v validator) pool(pool podnet.AddrRange) (routedBlock, bool) {
	const field = "spec.loadBalancer.pool"
	switch {
	case v.cantParse(field), pool == (podnet.AddrRange{}), v.reported(field):
	case !pool.IsValid() || !pool.First.Is4() || !pool.Last.Is4():
		v.add(field, pool.String(), "not an IPv4 range")
	case pool.Size() > MaxPoolAddrs:
		v.add(field, pool.String(), "%d addresses: at most %d (a /16)", pool.Size(), MaxPoolAddrs)
	default:
		return routedBlock{field, pool}, true
	}
	return routedBlock{}, false
}

// routedBlockApart checks that a routed block holds no special address
// and overlaps neither the cluster's subnets (plan), nor a host subnet,
// nor an earlier block.
func (v validator) routedBlockApart(b routedBlock, earlier []routedBlock, plan []declared, hostSubnets *prefixSet) {
	for _, sp := range specialBlocks {
		if overlaps(b.r, sp.prefix) {
			v.add(b.field, b.r.String(), "holds %s addresses, which no Service may have", sp.what)
			return
		}
	}
	for _, other := range plan {
		if overlaps(b.r, other.prefix) {
			v.add(b.field, b.r.String(), "overlaps %s %s", other.field, other.prefix)
			return
		}
	}
	for _, p := range b.r.Prefixes() {
		if hs, clash := hostSubnets.overlap(p); clash {
			v.add(b.field, b.r.String(), "overlaps subnet %s of %s: the router could not tell a host from a Service", hs.prefix, hs.field)
			return
		}
	}
	for _, prev := range earlier {
		if prev.r.First.Compare(b.r.Last) <= 0 && b.r.First.Compare(prev.r.Last) <= 0 {
			v.add(b.field, b.r.String(), "overlaps %s %s", prev.field, prev.r)
			return
		}
	}
}

// overlaps says whether r and p share an address (never when they are of
// different families: a dual lab's IPv4 pool beside its IPv6 subnets).
func overlaps(r podnet.AddrRange, p netip.Prefix) bool {
	if !p.IsValid() || r.First.Is4() != p.Addr().Is4() {
		return false
	}
	q := podnet.RangeOf(p)
	return r.First.Compare(q.Last) <= 0 && q.First.Compare(r.Last) <= 0
}
