package graph

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
)

// Pod is a pod to draw: the node it is attached to and its address.
type Pod struct {
	Name, Node string
	IP         netip.Addr
	// IPs are a dual-stack pod's addresses, primary first (IPs[0] is
	// IP); empty means just IP.
	IPs []netip.Addr
}

// PodsOf lists the pods of a lab's store that are attached to a node: those
// with spec.nodeName and a status.podIP (with status.podIPs, a dual-stack
// pod's pair). Others have no namespace yet.
func PodsOf(st *labstore.State) []Pod {
	var pods []Pod
	for _, p := range st.Pods {
		ip, err := netip.ParseAddr(p.Status.PodIP)
		if p.Spec.NodeName == "" || err != nil {
			continue
		}
		pod := Pod{Name: p.Name, Node: p.Spec.NodeName, IP: ip}
		for _, s := range p.Status.PodIPs {
			if a, err := netip.ParseAddr(s.IP); err == nil {
				pod.IPs = append(pod.IPs, a)
			}
		}
		pods = append(pods, pod)
	}
	return pods
}

// Build derives the graph of lab with pods attached, from the steps of the
// lab's network plan and of each pod's plan.
func Build(lab *topology.Lab, pods []Pod) (*Graph, error) {
	plan, err := network.PlanLab(lab)
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	g := &Graph{Lab: plan.Lab, CNI: plan.CNI}
	b := builder{g: g, byNS: map[string]int{}}
	b.addHost(Host{Name: topology.RouterName, Role: RoleRouter, Namespace: plan.Router.Namespace})
	for _, h := range plan.Hosts {
		b.addHost(Host{Name: h.Name, Role: Role(h.Role), Namespace: h.Namespace})
	}
	b.apply(plan.Steps)
	for _, p := range sortedPods(lab, pods) {
		// The same PodNet as the lab's own attach (labs.startPod): name and
		// address; the Kubernetes namespace is left to its default there.
		pp, err := network.PlanPod(lab, p.Node, network.PodNet{Name: p.Name, IP: p.IP, IPs: p.IPs})
		if err != nil {
			return nil, fmt.Errorf("graph: %w", err)
		}
		if _, dup := b.byNS[pp.Namespace]; dup {
			return nil, fmt.Errorf("graph: lab %q: pod %q is listed twice", lab.Name(), p.Name)
		}
		b.addHost(Host{Name: p.Name, Role: RolePod, Namespace: pp.Namespace, Node: p.Node})
		b.apply(pp.Steps)
	}
	b.resolveTunnels()
	return g, nil
}

// FromStore is Build with the pods of a lab's store.
func FromStore(lab *topology.Lab, st *labstore.State) (*Graph, error) {
	return Build(lab, PodsOf(st))
}

// sortedPods orders pods by their node's place in the lab file, then by name.
func sortedPods(lab *topology.Lab, pods []Pod) []Pod {
	rank := map[string]int{}
	for i, n := range lab.Spec.Nodes {
		rank[n.Name] = i
	}
	out := slices.Clone(pods)
	slices.SortStableFunc(out, func(a, b Pod) int {
		return cmp.Or(cmp.Compare(rank[a.Node], rank[b.Node]), strings.Compare(a.Node, b.Node), strings.Compare(a.Name, b.Name))
	})
	return out
}

// builder folds plan steps into a graph.
type builder struct {
	g    *Graph
	byNS map[string]int // namespace → index in g.Hosts
	// fdbs are the VXLAN FDB entries, resolved into tunnels once every
	// VTEP is known (a node's entries come before its peers' devices).
	fdbs []network.AddFDB
}

func (b *builder) addHost(h Host) {
	b.byNS[h.Namespace] = len(b.g.Hosts)
	b.g.Hosts = append(b.g.Hosts, h)
}

func (b *builder) host(ns string) *Host {
	if i, ok := b.byNS[ns]; ok {
		return &b.g.Hosts[i]
	}
	return nil
}

func (b *builder) iface(ns, name string) *Interface {
	if h := b.host(ns); h != nil {
		if i, ok := h.Interface(name); ok {
			return i
		}
	}
	return nil
}

func (b *builder) addIface(ns string, i Interface) {
	if h := b.host(ns); h != nil {
		h.Interfaces = append(h.Interfaces, i)
	}
}

// apply reads the steps that make interfaces, addresses, routes and links.
func (b *builder) apply(steps []network.Step) {
	for _, s := range steps {
		switch s := s.(type) {
		case network.AddVeth:
			b.addVeth(s)
		case network.AddBridge:
			b.addIface(s.NS, Interface{Name: s.Name, Kind: IfBridge})
		case network.AddVxlan:
			b.addIface(s.NS, Interface{Name: s.Name, Kind: IfVXLAN, VXLAN: &VXLAN{VNI: s.VNI, Port: s.Port, Local: s.Local, Dev: s.Dev}})
		case network.AddAddr:
			if i := b.iface(s.NS, s.Link); i != nil {
				i.Addrs = append(i.Addrs, s.Addr)
			}
		case network.SetMaster:
			if i := b.iface(s.NS, s.Link); i != nil {
				i.Master = s.Master
			}
		case network.SetSysctl:
			b.sysctl(s)
		case network.AddRoute:
			b.route(s)
		case network.AddFDB:
			b.fdbs = append(b.fdbs, s)
		}
	}
}

func (b *builder) addVeth(s network.AddVeth) {
	h, peer := b.host(s.NS), b.host(s.PeerNS)
	if h == nil || peer == nil {
		return
	}
	b.addIface(s.NS, Interface{Name: s.Name, Kind: IfVeth, PeerHost: peer.Name, PeerName: s.PeerName})
	b.addIface(s.PeerNS, Interface{Name: s.PeerName, Kind: IfVeth, PeerHost: h.Name, PeerName: s.Name})
	l := Link{Kind: LinkVeth, A: End{h.Name, s.Name}, B: End{peer.Name, s.PeerName}}
	if roleRank[h.Role] > roleRank[peer.Role] {
		l.A, l.B = l.B, l.A
	}
	b.g.Links = append(b.g.Links, l)
}

// roleRank orders a link's ends top down, as the pictures draw them: the
// router's end first, a pod's last.
var roleRank = map[Role]int{RoleRouter: 0, RoleNode: 1, RoleClient: 1, RolePod: 2}

// sysctl notes proxy ARP: net/ipv4/conf/<link>/proxy_arp = 1.
func (b *builder) sysctl(s network.SetSysctl) {
	link, ok := strings.CutPrefix(s.Key, "net/ipv4/conf/")
	if !ok {
		return
	}
	link, ok = strings.CutSuffix(link, "/proxy_arp")
	if i := b.iface(s.NS, link); ok && i != nil {
		i.ProxyARP = s.Value == "1"
	}
}

func (b *builder) route(s network.AddRoute) {
	h := b.host(s.NS)
	if h == nil || (!s.Gw.IsValid() && !s.Blackhole) {
		return
	}
	h.Routes = append(h.Routes, Route{Dst: s.Dst, Gw: s.Gw, Dev: s.Dev, Blackhole: s.Blackhole})
}

// resolveTunnels joins VTEPs: an FDB entry on a VXLAN device sends to the
// peer whose device's local address is the entry's destination. A pair is
// linked once, whichever side's entry names it first.
func (b *builder) resolveTunnels() {
	for _, s := range b.fdbs {
		b.tunnel(s)
	}
}

func (b *builder) tunnel(s network.AddFDB) {
	h := b.host(s.NS)
	if h == nil {
		return
	}
	from := End{h.Name, s.Dev}
	to, ok := b.vtepAt(s.Dst)
	if !ok {
		return
	}
	for _, l := range b.g.Links {
		if l.Kind == LinkVXLAN && (l.A == from && l.B == to || l.A == to && l.B == from) {
			return
		}
	}
	b.g.Links = append(b.g.Links, Link{Kind: LinkVXLAN, A: from, B: to})
}

func (b *builder) vtepAt(local netip.Addr) (End, bool) {
	for _, h := range b.g.Hosts {
		for _, i := range h.Interfaces {
			if i.VXLAN != nil && i.VXLAN.Local == local {
				return End{h.Name, i.Name}, true
			}
		}
	}
	return End{}, false
}
