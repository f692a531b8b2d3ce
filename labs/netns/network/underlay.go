package network

import (
	"fmt"
	"net/netip"

	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/podnet"
)

// planUnderlay plans the router and the hosts' eth0s:
//
//   - the router namespace forwards, and has one bridge lanN per distinct
//     host subnet (numbered in order of first appearance, nodes first) with
//     its gateway address on it;
//   - every host namespace has eth0, a veth whose peer is a port of its
//     subnet's bridge, its address, and a default route via the gateway;
//     nodes forward too;
//   - the router routes the Service subnet, the load balancer pool and the
//     external IP blocks via the first node.
func planUnderlay(p *Plan, lab *topology.Lab) error {
	labName := lab.Name()
	hosts := lab.Hosts()
	taken := map[netip.Addr]bool{}
	for _, h := range hosts {
		taken[h.IP.Addr()] = true
	}

	p.Router = Router{
		Namespace:     RouterNamespace(labName),
		ServiceSubnet: lab.Spec.ServiceSubnet,
		ServiceVia:    lab.Spec.Nodes[0].IP.Addr(),
	}
	p.Router.LoadBalancerRoutes = append(p.Router.LoadBalancerRoutes, lab.Spec.LoadBalancer.Pool.Prefixes()...)
	p.Router.LoadBalancerRoutes = append(p.Router.LoadBalancerRoutes, lab.Spec.ExternalIPs...)
	routerNames := map[string]bool{"lo": true}
	lanOf := map[netip.Prefix]*LAN{}
	for _, h := range hosts {
		subnet := h.IP.Masked()
		if _, ok := lanOf[subnet]; ok {
			continue
		}
		gw, err := routerGateway(subnet, taken)
		if err != nil {
			return fmt.Errorf("plan lab %s: %w", labName, err)
		}
		name := lanBridgeName(len(p.Router.LANs))
		routerNames[name] = true
		p.Router.LANs = append(p.Router.LANs, LAN{Bridge: name, Subnet: subnet, Gateway: gw})
		lanOf[subnet] = &p.Router.LANs[len(p.Router.LANs)-1]
	}

	r := p.Router.Namespace
	p.Steps = append(p.Steps, nsSteps(r, tag{Lab: labName, Role: "router"})...)
	p.Steps = append(p.Steps, SetSysctl{NS: r, Key: "net/ipv4/ip_forward", Value: "1"})
	for _, lan := range p.Router.LANs {
		p.Steps = append(p.Steps,
			AddBridge{NS: r, Name: lan.Bridge, MTU: podnet.UnderlayMTU},
			AddAddr{NS: r, Link: lan.Bridge, Addr: netip.PrefixFrom(lan.Gateway, lan.Subnet.Bits())},
			LinkUp{NS: r, Link: lan.Bridge},
		)
	}

	for _, h := range hosts {
		lan := lanOf[h.IP.Masked()]
		host := Host{
			Name:       h.Name,
			Role:       h.Role,
			Namespace:  NamespaceName(labName, h.Name),
			IP:         h.IP,
			Gateway:    lan.Gateway,
			LAN:        lan.Bridge,
			RouterPort: routerPortName(h.Name, routerNames),
		}
		routerNames[host.RouterPort] = true
		p.Hosts = append(p.Hosts, host)

		ns := host.Namespace
		p.Steps = append(p.Steps, nsSteps(ns, tag{Lab: labName, Role: string(h.Role)})...)
		p.Steps = append(p.Steps,
			AddVeth{NS: r, Name: host.RouterPort, MTU: podnet.UnderlayMTU, PeerNS: ns, PeerName: "eth0"},
			SetMaster{NS: r, Link: host.RouterPort, Master: lan.Bridge},
			LinkUp{NS: r, Link: host.RouterPort},
			AddAddr{NS: ns, Link: "eth0", Addr: h.IP},
			LinkUp{NS: ns, Link: "eth0"},
			AddRoute{NS: ns, Gw: lan.Gateway, Dev: "eth0"},
		)
		if h.Role == topology.RoleNode {
			p.Steps = append(p.Steps, SetSysctl{NS: ns, Key: "net/ipv4/ip_forward", Value: "1"})
		}
	}
	p.Steps = append(p.Steps, AddRoute{NS: r, Dst: p.Router.ServiceSubnet, Gw: p.Router.ServiceVia})
	for _, dst := range p.Router.LoadBalancerRoutes {
		p.Steps = append(p.Steps, AddRoute{NS: r, Dst: dst, Gw: p.Router.ServiceVia})
	}
	return nil
}

// routerGateway picks the router's address on subnet: the last usable
// address (the one before the broadcast address), or the highest one below
// it that no host has.
func routerGateway(subnet netip.Prefix, taken map[netip.Addr]bool) (netip.Addr, error) {
	network := subnet.Masked().Addr()
	for a := lastAddr(subnet).Prev(); a.IsValid() && a != network && subnet.Contains(a); a = a.Prev() {
		if !taken[a] {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("subnet %s has no free address left for the router's gateway", subnet)
}
