package network

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/podnet"
)

// planUnderlay plans the router and the hosts' eth0s:
//
//   - the router namespace forwards (IPv4, IPv6 or both: the lab's
//     families), and has one bridge lanN per distinct primary host subnet
//     (numbered in order of first appearance, nodes first) with its
//     gateway address of every family on it;
//   - every host namespace has eth0, a veth whose peer is a port of its
//     subnet's bridge, its addresses, and a default route per family via
//     the gateway; nodes forward too;
//   - the router routes the Service subnets (one per family), the load
//     balancer pool and the external IP blocks via the first node.
//
// IPv6 addresses skip DAD (nodad): nothing else on a lab's bridge has
// them, and a test uses them as soon as the lab is built. No namespace
// accepts router advertisements on eth0, and none has a route out of
// the machine: the router's only routes are to the lab's subnets.
func planUnderlay(p *Plan, lab *topology.Lab) error {
	labName := lab.Name()
	hosts := lab.Hosts()
	taken := map[netip.Addr]bool{}
	for _, h := range hosts {
		for _, ip := range hostIPs(h) {
			taken[ip.Addr()] = true
		}
	}
	planRouterFacts(p, lab)
	if err := planLANs(p, labName, hosts, taken); err != nil {
		return err
	}
	fams := lab.Spec.Families()

	r := p.Router.Namespace
	p.Steps = append(p.Steps, nsSteps(r, tag{Lab: labName, Role: "router"})...)
	p.Steps = append(p.Steps, forwardingSteps(r, fams)...)
	for _, lan := range p.Router.LANs {
		p.Steps = append(p.Steps, AddBridge{NS: r, Name: lan.Bridge, MTU: podnet.UnderlayMTU})
		if lanHasIPv6(lan) {
			p.Steps = append(p.Steps, noLinkLocalDAD(r, lan.Bridge))
		}
		for i, subnet := range lan.Subnets {
			p.Steps = append(p.Steps, AddAddr{NS: r, Link: lan.Bridge, Addr: netip.PrefixFrom(lan.Gateways[i], subnet.Bits()), NoDAD: subnet.Addr().Is6()})
		}
		p.Steps = append(p.Steps, LinkUp{NS: r, Link: lan.Bridge})
	}

	routerNames := map[string]bool{"lo": true}
	for _, lan := range p.Router.LANs {
		routerNames[lan.Bridge] = true
	}
	for _, h := range hosts {
		lan := p.Router.lanOf(h.IP.Masked())
		host := Host{
			Name:       h.Name,
			Role:       h.Role,
			Namespace:  NamespaceName(labName, h.Name),
			IP:         h.IP,
			Gateway:    lan.Gateway,
			IPs:        hostIPs(h),
			LAN:        lan.Bridge,
			RouterPort: routerPortName(h.Name, routerNames),
		}
		for _, ip := range host.IPs {
			host.Gateways = append(host.Gateways, lan.gatewayOn(ip.Masked()))
		}
		routerNames[host.RouterPort] = true
		p.Hosts = append(p.Hosts, host)
		p.Steps = append(p.Steps, hostSteps(labName, r, lan, &host, fams)...)
	}
	for i, dst := range p.Router.ServiceSubnets {
		p.Steps = append(p.Steps, AddRoute{NS: r, Dst: dst, Gw: p.Router.ServiceVias[i]})
	}
	for _, dst := range p.Router.LoadBalancerRoutes {
		p.Steps = append(p.Steps, AddRoute{NS: r, Dst: dst, Gw: p.Router.LoadBalancerVia})
	}
	return nil
}

// hostIPs are a host's addresses, primary first (a hand-built lab's host
// may have only IP).
func hostIPs(h topology.Host) []netip.Prefix {
	if len(h.IPs) == 0 {
		return []netip.Prefix{h.IP}
	}
	return h.IPs
}

// planRouterFacts fills in the router's namespace and its routes to the
// cluster: each Service subnet via the first node's address of its
// family.
func planRouterFacts(p *Plan, lab *topology.Lab) {
	first := lab.Spec.Nodes[0]
	p.Router = Router{
		Namespace:     RouterNamespace(lab.Name()),
		ServiceSubnet: lab.Spec.ServiceSubnet,
		ServiceVia:    first.IP.Addr(),
	}
	services := lab.Spec.ServiceSubnets
	if len(services) == 0 {
		services = []netip.Prefix{lab.Spec.ServiceSubnet}
	}
	firstIPs := first.IPs
	if len(firstIPs) == 0 {
		firstIPs = []netip.Prefix{first.IP}
	}
	for _, svc := range services {
		p.Router.ServiceSubnets = append(p.Router.ServiceSubnets, svc)
		p.Router.ServiceVias = append(p.Router.ServiceVias, topology.OfFamily(firstIPs, topology.FamilyOf(svc.Addr())).Addr())
	}
	p.Router.LoadBalancerVia = topology.OfFamily(firstIPs, topology.IPFamilyIPv4).Addr()
	p.Router.LoadBalancerRoutes = append(p.Router.LoadBalancerRoutes, lab.Spec.LoadBalancer.Pool.Prefixes()...)
	p.Router.LoadBalancerRoutes = append(p.Router.LoadBalancerRoutes, lab.Spec.ExternalIPs...)
}

// planLANs makes a LAN per distinct primary host subnet, with the
// host's secondary subnets on the same bridge. A secondary subnet on two
// LANs is refused: the router could not tell which bridge to send it to.
func planLANs(p *Plan, labName string, hosts []topology.Host, taken map[netip.Addr]bool) error {
	lanOfSecondary := map[netip.Prefix]int{}
	for _, h := range hosts {
		subnet := h.IP.Masked()
		i, ok := p.Router.lanIndex(subnet)
		if !ok {
			gw, err := routerGateway(subnet, taken)
			if err != nil {
				return fmt.Errorf("plan lab %s: %w", labName, err)
			}
			name := lanBridgeName(len(p.Router.LANs))
			p.Router.LANs = append(p.Router.LANs, LAN{Bridge: name, Subnet: subnet, Gateway: gw, Subnets: []netip.Prefix{subnet}, Gateways: []netip.Addr{gw}})
			i = len(p.Router.LANs) - 1
		}
		for _, ip := range hostIPs(h)[1:] {
			sec := ip.Masked()
			if j, seen := lanOfSecondary[sec]; seen {
				if j != i {
					return fmt.Errorf("plan lab %s: host %s: subnet %s is on the bridges of %s and %s (hosts that share one subnet must share the other)", labName, h.Name, sec, p.Router.LANs[j].Subnet, p.Router.LANs[i].Subnet)
				}
				continue
			}
			gw, err := routerGateway(sec, taken)
			if err != nil {
				return fmt.Errorf("plan lab %s: %w", labName, err)
			}
			lan := &p.Router.LANs[i]
			lan.Subnets = append(lan.Subnets, sec)
			lan.Gateways = append(lan.Gateways, gw)
			lanOfSecondary[sec] = i
		}
	}
	return nil
}

// lanIndex is the index of the LAN whose primary subnet is subnet.
func (r *Router) lanIndex(subnet netip.Prefix) (int, bool) {
	for i := range r.LANs {
		if r.LANs[i].Subnet == subnet {
			return i, true
		}
	}
	return 0, false
}

// lanOf is the LAN whose primary subnet is subnet.
func (r *Router) lanOf(subnet netip.Prefix) *LAN {
	i, _ := r.lanIndex(subnet)
	return &r.LANs[i]
}

// gatewayOn is the router's address on one of the LAN's subnets.
func (l *LAN) gatewayOn(subnet netip.Prefix) netip.Addr {
	for i, s := range l.Subnets {
		if s == subnet {
			return l.Gateways[i]
		}
	}
	return netip.Addr{}
}

// forwardingSteps make a namespace forward the lab's families.
func forwardingSteps(ns string, fams []topology.IPFamily) []Step {
	var steps []Step
	for _, f := range []topology.IPFamily{topology.IPFamilyIPv4, topology.IPFamilyIPv6} {
		if !slices.Contains(fams, f) {
			continue
		}
		if f == topology.IPFamilyIPv4 {
			steps = append(steps, SetSysctl{NS: ns, Key: "net/ipv4/ip_forward", Value: "1"})
		} else {
			steps = append(steps, SetSysctl{NS: ns, Key: "net/ipv6/conf/all/forwarding", Value: "1"})
		}
	}
	return steps
}

// hostSteps plug a host into its LAN: eth0's addresses and default
// routes, no router advertisements, and forwarding on a node.
func hostSteps(labName, r string, lan *LAN, host *Host, fams []topology.IPFamily) []Step {
	ns := host.Namespace
	steps := nsSteps(ns, tag{Lab: labName, Role: string(host.Role)})
	steps = append(steps,
		AddVeth{NS: r, Name: host.RouterPort, MTU: podnet.UnderlayMTU, PeerNS: ns, PeerName: "eth0"},
		SetMaster{NS: r, Link: host.RouterPort, Master: lan.Bridge},
		LinkUp{NS: r, Link: host.RouterPort},
	)
	hasIPv6 := false
	for _, ip := range host.IPs {
		hasIPv6 = hasIPv6 || ip.Addr().Is6()
	}
	if hasIPv6 {
		steps = append(steps, SetSysctl{NS: ns, Key: "net/ipv6/conf/eth0/accept_ra", Value: "0"}, noLinkLocalDAD(ns, "eth0"))
	}
	for _, ip := range host.IPs {
		steps = append(steps, AddAddr{NS: ns, Link: "eth0", Addr: ip, NoDAD: ip.Addr().Is6()})
	}
	steps = append(steps, LinkUp{NS: ns, Link: "eth0"})
	for _, gw := range host.Gateways {
		steps = append(steps, AddRoute{NS: ns, Gw: gw, Dev: "eth0"})
	}
	if host.Role == topology.RoleNode {
		steps = append(steps, forwardingSteps(ns, fams)...)
	}
	return steps
}

// routerGateway picks the router's address on subnet: the last usable
// address (the one before the IPv4 broadcast address, or before the last
// IPv6 address), or the highest one below it that no host has.
func routerGateway(subnet netip.Prefix, taken map[netip.Addr]bool) (netip.Addr, error) {
	network := subnet.Masked().Addr()
	for a := lastAddr(subnet).Prev(); a.IsValid() && a != network && subnet.Contains(a); a = a.Prev() {
		if !taken[a] {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("subnet %s has no free address left for the router's gateway", subnet)
}

// noLinkLocalDAD turns DAD off on a lab LAN link before it comes up, so
// that its link-local address is usable at once. A router (or a node)
// forwarding a packet asks for its next hop's address from its link-local
// one; while that is tentative (a second or more after the link comes up)
// no neighbour solicitation leaves, and the first connections through a
// just-made lab were lost for one to two seconds (16 of 400 from the
// client to an IPv6 cluster IP). Every address of a lab is unique by
// construction; the global ones skip DAD already (nodad).
func noLinkLocalDAD(ns, link string) Step {
	return SetSysctl{NS: ns, Key: "net/ipv6/conf/" + link + "/accept_dad", Value: "0"}
}

// lanHasIPv6 says whether a LAN carries an IPv6 subnet.
func lanHasIPv6(lan LAN) bool {
	for _, subnet := range lan.Subnets {
		if subnet.Addr().Is6() {
			return true
		}
	}
	return false
}
