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

// routedBlocks checks spec.loadBalancer.pool and spec.externalIPs, the
// addresses the lab's router sends to the cluster: IPv4, no special
// addresses, and overlapping nothing else of the lab (the pod and service
// subnets, the hosts' subnets, each other), since the router could not
// tell where to send an address that is both.
func (v validator) routedBlocks(s *Spec, hostSubnets *prefixSet) error {
	type block struct {
		field string
		r     podnet.AddrRange
	}
	var blocks []block
	if pool := s.LoadBalancer.Pool; pool != (podnet.AddrRange{}) {
		const field = "spec.loadBalancer.pool"
		if !pool.IsValid() || !pool.First.Is4() || !pool.Last.Is4() {
			return v.err(field, pool.String(), "not an IPv4 range")
		}
		if pool.Size() > MaxPoolAddrs {
			return v.err(field, pool.String(), "%d addresses: at most %d (a /16)", pool.Size(), MaxPoolAddrs)
		}
		blocks = append(blocks, block{field, pool})
	}
	for i, p := range s.ExternalIPs {
		field := fmt.Sprintf("spec.externalIPs[%d]", i)
		if err := v.subnet(field, p); err != nil {
			return err
		}
		blocks = append(blocks, block{field, podnet.RangeOf(p)})
	}
	for i, b := range blocks {
		for _, sp := range specialBlocks {
			if overlaps(b.r, sp.prefix) {
				return v.err(b.field, b.r.String(), "holds %s addresses, which no Service may have", sp.what)
			}
		}
		for _, other := range []struct {
			field string
			p     netip.Prefix
		}{{"spec.podSubnet", s.PodSubnet}, {"spec.serviceSubnet", s.ServiceSubnet}} {
			if overlaps(b.r, other.p) {
				return v.err(b.field, b.r.String(), "overlaps %s %s", other.field, other.p)
			}
		}
		for _, p := range b.r.Prefixes() {
			if hs, clash := hostSubnets.overlap(p); clash {
				return v.err(b.field, b.r.String(), "overlaps subnet %s of %s: the router could not tell a host from a Service", hs.prefix, hs.field)
			}
		}
		for _, prev := range blocks[:i] {
			if prev.r.First.Compare(b.r.Last) <= 0 && b.r.First.Compare(prev.r.Last) <= 0 {
				return v.err(b.field, b.r.String(), "overlaps %s %s", prev.field, prev.r)
			}
		}
	}
	return nil
}

// overlaps says whether r and p share an address.
func overlaps(r podnet.AddrRange, p netip.Prefix) bool {
	if !p.IsValid() {
		return false
	}
	q := podnet.RangeOf(p)
	return r.First.Compare(q.Last) <= 0 && q.First.Compare(r.Last) <= 0
}
