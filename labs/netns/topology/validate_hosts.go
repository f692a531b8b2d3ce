package topology

import (
	"fmt"
	"net/netip"

	"github.com/svclab/svclab/labs/podnet"
)

// hostsSeen is what the hosts checked so far declared: a later host may
// not repeat a name or an address, shares a subnet only whole, and a
// later node's pod range overlaps no earlier one. Every check is a map
// lookup (prefixSet costs at most 33), so validation is linear in the
// number of hosts.
type hostsSeen struct {
	names     map[string]string     // host name -> field that declared it
	addrs     map[netip.Addr]string // host address -> field that declared it
	subnets   *prefixSet            // distinct host subnets, first declaration wins
	perSubnet map[netip.Prefix]int  // hosts on each subnet
	podCIDRs  *prefixSet
	// partner is, for each host subnet of a dual lab, the subnet of the
	// other family that its hosts have, and the field that paired them.
	partner map[netip.Prefix]declared
}

func newHostsSeen(hosts, nodes int) *hostsSeen {
	return &hostsSeen{
		names:     make(map[string]string, hosts),
		addrs:     make(map[netip.Addr]string, hosts),
		subnets:   newPrefixSet(hosts),
		perSubnet: map[netip.Prefix]int{},
		podCIDRs:  newPrefixSet(nodes),
		partner:   map[netip.Prefix]declared{},
	}
}

// hosts checks the nodes and the clients, each field on its own, and
// returns the host subnets that passed, for the routed blocks' checks. A
// lab of more than MaxHosts hosts is one problem: its hosts are not
// checked one by one.
func (v validator) hosts(s *Spec) *prefixSet {
	if len(s.Nodes) == 0 {
		v.add("spec.nodes", "", "at least one node is required")
	}
	n := len(s.Nodes) + len(s.Clients)
	if n > MaxHosts {
		v.add("spec", "", "too many hosts: %d nodes and %d clients, at most %d in all", len(s.Nodes), len(s.Clients), MaxHosts)
		return newPrefixSet(0)
	}
	seen := newHostsSeen(n, len(s.Nodes))
	for i := range s.Nodes {
		node := &s.Nodes[i]
		path := fmt.Sprintf("spec.nodes[%d]", i)
		v.hostName(seen, path+".name", node.Name)
		v.completeNode(s, node, path)
		v.hostAddresses(seen, s, path+".ip", orPrimary(node.IPs, node.IP))
		for _, cidr := range orPrimary(node.PodCIDRs, node.PodCIDR) {
			v.podCIDR(seen, s, path+".podCIDR", cidr)
		}
	}
	for i := range s.Clients {
		client := &s.Clients[i]
		path := fmt.Sprintf("spec.clients[%d]", i)
		v.hostName(seen, path+".name", client.Name)
		v.completeClient(s, client, path)
		v.hostAddresses(seen, s, path+".ip", orPrimary(client.IPs, client.IP))
	}
	return seen.subnets
}

// orPrimary is a completed list, or the single value of a lab too big to
// complete.
func orPrimary(list []netip.Prefix, primary netip.Prefix) []netip.Prefix {
	if len(list) == 0 {
		return []netip.Prefix{primary}
	}
	return list
}

// hostAddresses checks a host's addresses one by one, then that a dual
// lab's hosts that share a subnet of one family share the subnet of the
// other: each pair is one bridge of the lab's router.
func (v validator) hostAddresses(seen *hostsSeen, s *Spec, field string, ips []netip.Prefix) {
	for _, ip := range ips {
		v.hostAddress(seen, s, field, ip)
	}
	if len(ips) != 2 || !v.ok(field) {
		return
	}
	a, b := ips[0].Masked(), ips[1].Masked()
	for _, pair := range [][2]netip.Prefix{{a, b}, {b, a}} {
		if other, ok := seen.partner[pair[0]]; ok && other.prefix != pair[1] {
			v.add(field, prefixList(ips), "its subnets %s and %s: %s has %s with %s (hosts that share a subnet of one family share that of the other: each pair is one bridge of the lab's router)", a, b, other.field, pair[0], other.prefix)
			return
		}
	}
	seen.partner[a] = declared{b, field}
	seen.partner[b] = declared{a, field}
}

// hostName checks a node's or client's name: a DNS label, not the
// router's, not taken by an earlier host.
func (v validator) hostName(seen *hostsSeen, field, name string) {
	if !v.name(field, name, MaxHostNameLen) {
		return
	}
	if name == RouterName {
		v.add(field, name, "reserved for the lab's edge router")
		return
	}
	if prev, taken := seen.names[name]; taken {
		v.add(field, name, "duplicate name (already used by %s)", prev)
		return
	}
	seen.names[name] = field
}

// hostAddress checks a node's or client's address and its subnet: a host
// address of its own, on a subnet apart from the cluster's subnets that
// other hosts share only whole, with a port left on the router's bridge
// and an address left for the router.
func (v validator) hostAddress(seen *hostsSeen, s *Spec, field string, ip netip.Prefix) {
	if !v.hostIP(field, ip) {
		return
	}
	if prev, taken := seen.addrs[ip.Addr()]; taken {
		v.add(field, ip.String(), "duplicate address (already used by %s)", prev)
		return
	}
	seen.addrs[ip.Addr()] = field
	subnet := ip.Masked()
	for _, other := range v.planSubnets(s) {
		if subnet.Overlaps(other.prefix) {
			v.add(field, ip.String(), "subnet %s overlaps %s %s", subnet, other.field, other.prefix)
			return
		}
	}
	if _, shared := seen.subnets.exact[subnet]; !shared {
		if hs, clash := seen.subnets.overlap(subnet); clash {
			v.add(field, ip.String(), "subnet %s overlaps subnet %s of %s (hosts share a subnet only with the same prefix)", subnet, hs.prefix, hs.field)
			return
		}
		seen.subnets.add(subnet, field)
	}
	// Each limit is said once, by the host that goes past it (no host
	// goes past the usable addresses: the next would repeat one, or be
	// the network or broadcast address).
	seen.perSubnet[subnet]++
	switch hosts, usable := seen.perSubnet[subnet], usableAddrs(subnet); {
	case hosts == MaxHostsPerSubnet+1:
		v.add(field, ip.String(), "subnet %s has more than %d hosts: each is a port of the router's bridge for that subnet, and a Linux bridge has at most %d ports", subnet, MaxHostsPerSubnet, MaxHostsPerSubnet)
	case hosts == usable:
		v.add(field, ip.String(), "subnet %s has %d usable addresses and its hosts take them all: the lab's router needs one for the hosts' gateway", subnet, usable)
	}
}

// usableAddrs is how many host addresses a subnet has (an IPv4 subnet's
// network and broadcast addresses are not, nor an IPv6 subnet's
// Subnet-Router anycast address), at most 1<<20.
func usableAddrs(subnet netip.Prefix) int {
	hostBits := subnet.Addr().BitLen() - subnet.Bits()
	switch {
	case hostBits > 20:
		return 1 << 20
	case subnet.Addr().Is4():
		return 1<<hostBits - 2
	default:
		return 1<<hostBits - 1
	}
}

// hostIP checks a node or client address (complete has checked that the
// lab has its family), with a subnet that leaves room for the router's
// gateway, and not the subnet's network or broadcast address.
func (v validator) hostIP(field string, p netip.Prefix) bool {
	switch {
	case v.cantParse(field), v.reported(field):
	case !p.IsValid():
		v.add(field, "", "required (an address with its prefix length, e.g. 192.168.16.73/20)")
	case p.Addr().Is6():
		return v.hostIPv6(field, p)
	case p.Bits() > 30:
		v.add(field, p.String(), "prefix too long: at most /30, the router needs an address on this subnet")
	case p.Addr() == p.Masked().Addr():
		v.add(field, p.String(), "is the subnet's network address")
	case p.Addr() == podnet.Broadcast(p):
		v.add(field, p.String(), "is the subnet's broadcast address")
	default:
		return true
	}
	return false
}

// hostIPv6 checks a node's or client's IPv6 address: a global unicast
// (or unique local) address, not IPv4-mapped, with room on its subnet for
// the router's gateway, and not the Subnet-Router anycast address.
func (v validator) hostIPv6(field string, p netip.Prefix) bool {
	switch {
	case p.Addr().Is4In6():
		v.add(field, p.String(), "an IPv4-mapped IPv6 address: write the IPv4 one")
	case !p.Addr().IsGlobalUnicast():
		v.add(field, p.String(), "not a unicast address a host may have (link-local, multicast, loopback or unspecified)")
	case p.Bits() > 126:
		v.add(field, p.String(), "prefix too long: at most /126, the router needs an address on this subnet")
	case p.Addr() == p.Masked().Addr():
		v.add(field, p.String(), "is the subnet's Subnet-Router anycast address")
	default:
		return true
	}
	return false
}

// podCIDR checks a node's pod range: a network address inside podSubnet
// (when that passed its checks), with room for the overlay address (.0),
// the gateway (.1) and pods, overlapping no earlier node's.
func (v validator) podCIDR(seen *hostsSeen, s *Spec, field string, p netip.Prefix) {
	if !v.planSubnet(field, p) {
		return
	}
	pods := OfFamily(orPrimary(s.PodSubnets, s.PodSubnet), FamilyOf(p.Addr()))
	switch {
	case p.Addr().Is4() && p.Bits() > 30:
		v.add(field, p.String(), "too small: at most /30")
	case p.Addr().Is6() && p.Bits() > 126:
		v.add(field, p.String(), "too small: at most /126")
	case v.ok("spec.podSubnet") && (p.Bits() < pods.Bits() || !pods.Contains(p.Addr())):
		v.add(field, p.String(), "not inside spec.podSubnet %s", pods)
	default:
		if other, clash := seen.podCIDRs.overlap(p); clash {
			v.add(field, p.String(), "overlaps %s %s", other.field, other.prefix)
			return
		}
		seen.podCIDRs.add(p, field)
	}
}
