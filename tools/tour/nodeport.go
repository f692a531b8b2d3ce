package tour

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/svclab/svclab/labs"
	"github.com/svclab/svclab/labs/network"
	"github.com/svclab/svclab/labs/topology"
	"github.com/svclab/svclab/labs/traffic"
	"github.com/svclab/svclab/proxy/iptables"
)

// NodePort is seed 004's walk-through: an outside client opens HOSTA's
// NodePort, HOSTA DNATs to the pod on HOSTB, masquerades to its overlay
// address, encapsulates in VXLAN to HOSTB, and the reply comes back the
// same way. cni picks the variant: canal (the article's cluster, the
// default), flannel-vxlan or calico-proxyarp.
func NodePort(ctx context.Context, opts Options, cni string) error {
	if cni == "" {
		cni = string(topology.CNICanal)
	}
	known := false
	for _, c := range topology.CNIs() {
		known = known || string(c) == cni
	}
	if !known {
		return fmt.Errorf("tour nodeport: --cni %q: want one of %v", cni, topology.CNIs())
	}
	edit := func(s string) string {
		return regexp.MustCompile(`(?m)^  cni: .*$`).ReplaceAllString(s, "  cni: "+cni)
	}
	return runWith(ctx, opts, filepath.Join("clusters", "nodeport.yaml"), edit, func(g *guide) error {
		root, _ := checkoutRoot(opts.Root)
		return nodePortSteps(ctx, g, filepath.Join(root, "clusters", "workloads", "httpserver.yaml"))
	})
}

// nodePortFacts are the names and addresses the walk-through talks about.
type nodePortFacts struct {
	client, hostA, hostB              string
	clientIP, hostAIP, hostBIP, podIP netip.Addr
	vtepA, vtepB                      netip.Addr
	vxlan                             string
	vni, vxlanPort                    int
	pod, podVeth                      string
	podCIDRB                          netip.Prefix
	calico                            bool
	svcChain, extChain, sepChain      string
}

// nodePortWalk is what the steps of the walk-through share.
type nodePortWalk struct {
	ctx      context.Context
	g        *guide
	manifest string
	f        nodePortFacts // deploy finds them
}

// nodePortSteps runs the walk-through's steps in order, each one section of
// the output; the first error ends it.
func nodePortSteps(ctx context.Context, g *guide, manifest string) error {
	w := &nodePortWalk{ctx: ctx, g: g, manifest: manifest}
	for _, step := range []func() error{
		w.deploy,
		w.request,
		w.hostAServices,
		w.hostANodePorts,
		w.hostARouting,
		w.hostAMasquerade,
		w.hostAEncapsulation,
		w.hostBDecapsulation,
		w.podReply,
		w.conntrack,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// deploy applies the httpserver manifest and shows the environment.
func (w *nodePortWalk) deploy() error {
	ctx, g := w.ctx, w.g
	g.section("Deploy the article's httpserver: one pod on HOSTB, a NodePort Service 3000:30000/TCP,8080:30080/TCP")
	if err := g.lab.Apply(ctx, w.manifest, g.labOpts(indent(g.out))); err != nil {
		return err
	}
	f, err := factsOf(g.lab)
	if err != nil {
		return err
	}
	w.f = f
	g.say("Environment, as in the article:")
	g.say("  CLIENT %s    HOSTA eth0 %s    HOSTB eth0 %s", f.clientIP, f.hostAIP, f.hostBIP)
	g.say("                           %s %s/32      %s %s/32", f.vxlan, f.vtepA, f.vxlan, f.vtepB)
	g.say("                                                  POD IP %s (%s)", f.podIP, f.pod)
	return nil
}

// request opens the NodePort from the client: the pod sees HOSTA's overlay address.
func (w *nodePortWalk) request() error {
	g, f := w.g, w.f
	g.section(fmt.Sprintf("The request: %s:randomport -> %s:30000 (7 connections, each asking /clientip)", f.clientIP, f.hostAIP))
	res, err := g.lab.Traffic(f.client, traffic.Options{Target: f.hostAIP.String() + ":30000", Connections: 7, Path: "/clientip"}, g.labOpts(nil))
	if err != nil {
		return err
	}
	for _, c := range res.Connections {
		if c.Failure != "" {
			return fmt.Errorf("connection %d failed: %s", c.Index, c.Error)
		}
		g.say("client %s: the pod saw the connection come from %s", c.LocalAddress, c.Backend)
	}
	g.hop("the pod never saw %s: it saw HOSTA's %s address %s. Why? Follow the packet.", f.clientIP, f.vxlan, f.vtepA)
	return nil
}

// hostAServices follows the packet from PREROUTING into KUBE-SERVICES on HOSTA.
func (w *nodePortWalk) hostAServices() error {
	g, f := w.g, w.f
	g.section("HOSTA (the forwarding node): PREROUTING -> KUBE-SERVICES")
	if _, err := g.show(f.hostA, nil, "iptables", "-t", "nat", "-vnL", "PREROUTING"); err != nil {
		return err
	}
	if _, err := g.show(f.hostA, []string{"Chain", "pkts", "KUBE-NODEPORTS"}, "iptables", "-t", "nat", "-vnL", "KUBE-SERVICES"); err != nil {
		return err
	}
	g.hop("no cluster IP matched %s; the chain's last rule (destination type LOCAL) sent the packet to KUBE-NODEPORTS", f.hostAIP)
	return nil
}

// hostANodePorts shows KUBE-NODEPORTS, KUBE-EXT, KUBE-SVC and KUBE-SEP on HOSTA.
func (w *nodePortWalk) hostANodePorts() error {
	g, f := w.g, w.f
	g.section("HOSTA: KUBE-NODEPORTS matches the port, marks the packet for masquerade, picks the endpoint")
	if _, err := g.show(f.hostA, []string{"30000"}, "iptables", "-t", "nat", "-vnL", "KUBE-NODEPORTS"); err != nil {
		return err
	}
	if _, err := g.show(f.hostA, nil, "iptables", "-t", "nat", "-vnL", f.extChain); err != nil {
		return err
	}
	g.hop("KUBE-EXT marked the packet 0x4000 (KUBE-MARK-MASQ): it will be masqueraded on the way out.")
	g.say("(The article's kube-proxy put KUBE-MARK-MASQ straight into KUBE-NODEPORTS; since 1.24 upstream")
	g.say(" does it in a KUBE-EXT chain per Service port. Same effect, same counters: 7 packets, the 7 SYNs.)")
	if _, err := g.show(f.hostA, nil, "iptables", "-t", "nat", "-vnL", f.svcChain); err != nil {
		return err
	}
	if _, err := g.show(f.hostA, nil, "iptables", "-t", "nat", "-vnL", f.sepChain); err != nil {
		return err
	}
	g.hop("one endpoint, so KUBE-SVC sends everything to its KUBE-SEP chain, which DNATs to %s:3000", f.podIP)
	return nil
}

// hostARouting shows HOSTA's route to HOSTB's pods through the VXLAN device.
func (w *nodePortWalk) hostARouting() error {
	g, f := w.g, w.f
	g.section("HOSTA: routing the DNATed packet")
	if _, err := g.show(f.hostA, []string{f.podCIDRB.Addr().String()[:strings.LastIndexByte(f.podCIDRB.Addr().String(), '.')]}, "ip", "route"); err != nil {
		return err
	}
	if _, err := g.show(f.hostA, nil, "ip", "-d", "link", "show", f.vxlan); err != nil {
		return err
	}
	g.hop("%s's pod network is reached through %s (onlink, next hop %s)", f.hostB, f.vxlan, f.vtepB)
	return nil
}

// hostAMasquerade shows POSTROUTING masquerading the marked packet on HOSTA.
func (w *nodePortWalk) hostAMasquerade() error {
	g, f := w.g, w.f
	g.section("HOSTA: POSTROUTING -> KUBE-POSTROUTING masquerades the marked packet")
	if _, err := g.show(f.hostA, nil, "iptables", "-t", "nat", "-vnL", "KUBE-POSTROUTING"); err != nil {
		return err
	}
	if _, err := g.show(f.hostA, nil, "iptables", "-t", "nat", "-vnL", "POSTROUTING"); err != nil {
		return err
	}
	g.hop("MASQUERADE takes the address of the outgoing device (inet_select_addr on %s): %s.", f.vxlan, f.vtepA)
	g.hop("the packet is now %s:port -> %s:3000", f.vtepA, f.podIP)
	g.hop("MARK xor 0x4000 cleared the mark first: the VXLAN packet that carries it passes POSTROUTING again")
	g.hop("unmarked and RETURNs (the RETURN counter), so it is not masqueraded twice (kubernetes#92035, 1.19;")
	g.hop("the article credits a RETURN rule of its own POSTROUTING).")
	return nil
}

// hostAEncapsulation shows the neighbour and FDB entries that give the outer destination.
func (w *nodePortWalk) hostAEncapsulation() error {
	g, f := w.g, w.f
	g.section(fmt.Sprintf("HOSTA: %s encapsulates — neighbour and FDB entries give the outer destination", f.vxlan))
	neigh, err := g.show(f.hostA, []string{f.vtepB.String()}, "ip", "neigh")
	if err != nil {
		return err
	}
	mac := macOf(neigh, f.vtepB.String())
	if _, err := g.show(f.hostA, []string{mac}, "bridge", "fdb"); err != nil {
		return err
	}
	g.hop("the inner frame goes to %s (PERMANENT neighbour of %s); the FDB maps that MAC to %s:", mac, f.vtepB, f.hostBIP)
	g.hop("encapsulated in VXLAN VNI %d, UDP to %s:%d, sent from %s's eth0 %s", f.vni, f.hostBIP, f.vxlanPort, f.hostA, f.hostAIP)
	return nil
}

// hostBDecapsulation shows HOSTB decapsulating and routing to the pod.
func (w *nodePortWalk) hostBDecapsulation() error {
	g, f := w.g, w.f
	g.section(fmt.Sprintf("HOSTB (the receiver): %s decapsulates, the route leads to the pod", f.vxlan))
	if _, err := g.show(f.hostB, nil, "ip", "-d", "link", "show", f.vxlan); err != nil {
		return err
	}
	g.hop("VNI %d matches HOSTB's %s: the inner packet %s -> %s:3000 comes out of it", f.vni, f.vxlan, f.vtepA, f.podIP)
	if _, err := g.show(f.hostB, []string{f.podIP.String()}, "ip", "route"); err != nil {
		return err
	}
	if f.calico {
		if _, err := g.show(f.hostB, nil, "ip", "addr", "show", f.podVeth); err != nil {
			return err
		}
		if _, err := g.show(f.hostB, nil, "cat", "/proc/sys/net/ipv4/conf/"+f.podVeth+"/proxy_arp"); err != nil {
			return err
		}
		g.hop("a /32 host route to the pod's veth %s (no bridge, no address on it); proxy_arp = 1", f.podVeth)
	} else {
		g.hop("the pod CIDR is on the cni0 bridge; the pod's veth is one of its ports")
	}
	return nil
}

// podReply shows the pod's routes and neighbours, and the way back.
func (w *nodePortWalk) podReply() error {
	g, f := w.g, w.f
	g.section("The pod answers: its routes, and who answers ARP for its gateway")
	if _, err := g.show(f.pod, nil, "ip", "route"); err != nil {
		return err
	}
	if _, err := g.show(f.pod, nil, "ip", "neigh"); err != nil {
		return err
	}
	if f.calico {
		g.hop("the pod's gateway 169.254.1.1 exists nowhere: %s answers ARP for it by proxy ARP (MAC ee:ee:ee:ee:ee:ee)", f.podVeth)
	} else {
		g.hop("the pod's gateway is cni0's address on HOSTB")
	}
	if _, err := g.show(f.hostB, []string{f.vtepA.String()}, "ip", "route"); err != nil {
		return err
	}
	g.hop("the reply %s:3000 -> %s goes back through %s to HOSTA, the same way in reverse", f.podIP, f.vtepA, f.vxlan)
	return nil
}

// conntrack shows where the addresses were rewritten, on both nodes.
func (w *nodePortWalk) conntrack() error {
	g, f := w.g, w.f
	g.section("conntrack on both nodes: where the addresses were rewritten")
	if _, err := g.show(f.hostA, nil, "conntrack", "-L", "-p", "tcp", "--dport", "30000"); err != nil {
		return err
	}
	if _, err := g.show(f.hostB, nil, "conntrack", "-L", "-p", "tcp", "-d", f.podIP.String()); err != nil {
		return err
	}
	g.hop("HOSTA: original %s -> %s:30000, reply %s:3000 -> %s: DNAT and SNAT in one entry;", f.clientIP, f.hostAIP, f.podIP, f.vtepA)
	g.hop("HOSTA's conntrack reverses both for the reply: %s:30000 -> %s, as the client expects.", f.hostAIP, f.clientIP)
	g.hop("HOSTB: %s -> %s:3000 with no NAT at all.", f.vtepA, f.podIP)
	return nil
}

func factsOf(lab *labs.Lab) (nodePortFacts, error) {
	var f nodePortFacts
	plan, err := network.PlanLab(lab.Topology)
	if err != nil {
		return f, err
	}
	t := lab.Topology
	if len(t.Spec.Nodes) < 2 || len(t.Spec.Clients) < 1 {
		return f, fmt.Errorf("tour nodeport: the lab needs two nodes and a client")
	}
	f.hostA, f.hostB, f.client = t.Spec.Nodes[0].Name, t.Spec.Nodes[1].Name, t.Spec.Clients[0].Name
	f.hostAIP, f.hostBIP, f.clientIP = t.Spec.Nodes[0].IP.Addr(), t.Spec.Nodes[1].IP.Addr(), t.Spec.Clients[0].IP.Addr()
	f.podCIDRB = t.Spec.Nodes[1].PodCIDR
	a, _ := plan.Host(f.hostA)
	b, _ := plan.Host(f.hostB)
	f.vtepA, f.vtepB = a.Node.VTEP.Addr, b.Node.VTEP.Addr
	f.vxlan, f.vni, f.vxlanPort = a.Node.VTEP.Device, a.Node.VTEP.VNI, a.Node.VTEP.Port
	f.calico = b.Node.Bridge == ""
	objs, _, err := lab.Store.ReadObjects()
	if err != nil {
		return f, err
	}
	for _, p := range objs.Pods {
		if p.Labels["caicloud-app"] == "httpserver" {
			f.pod, f.podIP = p.Name, netip.MustParseAddr(p.Status.PodIP)
			f.podVeth = network.CalicoVethName(p.Namespace, p.Name)
		}
	}
	if f.pod == "" {
		return f, fmt.Errorf("tour nodeport: the httpserver pod is missing")
	}
	f.svcChain = iptables.ServiceChainName("default/httpserver:http", "tcp")
	f.extChain = iptables.ExternalChainName("default/httpserver:http", "tcp")
	f.sepChain = iptables.EndpointChainName("default/httpserver:http", "tcp", netip.AddrPortFrom(f.podIP, 3000).String())
	return f, nil
}

var macPattern = regexp.MustCompile(`lladdr ([0-9a-f:]{17})`)

// macOf returns the link-layer address of ip in `ip neigh` output.
func macOf(neigh, ip string) string {
	for _, line := range strings.Split(neigh, "\n") {
		if strings.HasPrefix(line, ip+" ") {
			if m := macPattern.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	return "?"
}
