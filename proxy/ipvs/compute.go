package ipvs

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// piece is what one service port asks for: Compute is the union of the
// pieces of every service port, and a partial sync recomputes only the
// pieces of the service ports that changed (state.go).
type piece struct {
	sp *model.ServicePort
	// vss are its virtual servers, each key once (the first wins).
	vss []DesiredVirtualServer
	// entries are its ipset members, a name repeated when asked twice.
	entries []setEntry
	// binds are the addresses it binds to kube-ipvs0, maybe repeated.
	binds []netip.Addr
	// noNodeAccess are load balancer IP:ports whose source ranges leave
	// the node out (KUBE-IPVS-OUT-FILTER drops).
	noNodeAccess []kernel.Entry
}

// setEntry is one member of the ipset at index set of Sets.
type setEntry struct {
	set   int
	entry string
}

// computer computes pieces with one set of Settings.
type computer struct {
	s        *Settings
	sched    string
	nodePort []netip.Addr
}

func newComputer(s *Settings) *computer {
	return &computer{s: s, sched: s.scheduler(), nodePort: s.nodePortIPs()}
}

// Compute returns the kernel state for snap. It is a pure function: the
// same snapshot and settings always give the same Desired.
//
// Per service port it does what upstream's syncProxyRules does:
//
//   - every local endpoint goes into KUBE-LOOP-BACK (ip,proto:port,ip), so
//     a pod reaching itself through the service is masqueraded;
//   - the cluster IP:port goes into KUBE-CLUSTER-IP, gets a virtual server
//     and is bound to kube-ipvs0;
//   - each external IP goes into KUBE-EXTERNAL-IP (KUBE-EXTERNAL-IP-LOCAL
//     with externalTrafficPolicy Local) and gets a virtual server;
//   - each load balancer IP goes into KUBE-LOAD-BALANCER (and -LOCAL, -FW,
//     -SOURCE-CIDR, -SOURCE-IP as its policy and source ranges say) and
//     gets a virtual server;
//   - a node port goes into KUBE-NODE-PORT-TCP/UDP (bitmap:port) or
//     KUBE-NODE-PORT-SCTP-HASH (ip,port per node IP) and gets a virtual
//     server on every node IP; without node IPs it is skipped, together
//     with the health check node port, as upstream does;
//   - a health check node port goes into KUBE-HEALTH-CHECK-NODE-PORT.
//
// Real servers come from model.CategorizeEndpoints: the cluster endpoints,
// or for a Local policy the local ones — falling back to the cluster ones
// when the node has none (kubernetes/kubernetes#97081). Two service ports
// claiming the same virtual server (an external IP listed twice) share the
// first one's real servers.
func Compute(snap *model.Snapshot, s Settings) *Desired {
	var st desiredState
	return st.computeAll(snap, s)
}

func (p *piece) add(set, entry string) {
	p.entries = append(p.entries, setEntry{setIndex[set], entry})
}

// setNet is a network as `ipset list` writes it in a hash:ip,port,net
// member: a single address (/32, /128) without its length, so that what
// is desired reads back the same from the kernel.
func setNet(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}

func ipPort(ip netip.Addr, proto string, port int32) string {
	return ip.String() + "," + proto + ":" + strconv.Itoa(int(port))
}

// piece computes what sp asks for. Upstream: the body of
// syncProxyRules' loop over the service ports.
func (c *computer) piece(sp *model.ServicePort) *piece {
	p := &piece{}
	c.fill(p, sp)
	return p
}

// fill makes p what sp asks for, reusing its lists' memory.
func (c *computer) fill(p *piece, sp *model.ServicePort) {
	*p = piece{sp: sp, vss: p.vss[:0], entries: p.entries[:0], binds: p.binds[:0], noNodeAccess: p.noNodeAccess[:0]}
	proto := strings.ToLower(string(sp.Protocol))
	name := sp.Name.String()

	for _, ep := range sp.Endpoints {
		if ep.IsLocal {
			p.add(SetLoopBack, ipPort(ep.IP, proto, ep.Port)+","+ep.IP.String())
		}
	}

	cluster, local, _, _ := model.CategorizeEndpoints(sp)
	pick := func(onlyLocal bool) []model.Endpoint {
		if onlyLocal && len(local) > 0 {
			return local
		}
		return cluster
	}

	p.add(SetClusterIP, ipPort(sp.ClusterIP, proto, sp.Port))
	c.virtualServer(p, name, sp.ClusterIP, sp.Port, pick(sp.InternalPolicyLocal))
	p.binds = append(p.binds, sp.ClusterIP)

	for _, ip := range sp.ExternalIPs {
		if sp.ExternalPolicyLocal {
			p.add(SetExternalIPLocal, ipPort(ip, proto, sp.Port))
		} else {
			p.add(SetExternalIP, ipPort(ip, proto, sp.Port))
		}
		c.virtualServer(p, name, ip, sp.Port, pick(sp.ExternalPolicyLocal))
		if !c.s.isNodeAddress(ip) {
			p.binds = append(p.binds, ip)
		}
	}

	for _, ip := range sp.LoadBalancerVIPs {
		entry := ipPort(ip, proto, sp.Port)
		p.add(SetLoadBalancer, entry)
		if sp.ExternalPolicyLocal {
			p.add(SetLoadBalancerLocal, entry)
		}
		if len(sp.LoadBalancerSourceRanges) > 0 {
			p.add(SetLoadBalancerFW, entry)
			allowFromNode := false
			for _, cidr := range sp.LoadBalancerSourceRanges {
				p.add(SetLoadBalancerSourceCIDR, entry+","+setNet(cidr))
				if c.s.NodeIP.IsValid() && cidr.Contains(c.s.NodeIP) {
					allowFromNode = true
				}
			}
			if allowFromNode {
				// The node reaches its own load balancer IP through a
				// local route, with that IP as the source.
				p.add(SetLoadBalancerSourceIP, entry+","+ip.String())
			} else {
				p.noNodeAccess = append(p.noNodeAccess, kernel.Entry{IP: ip, Protocol: kernel.Protocol(sp.Protocol), Port: uint16(sp.Port)})
			}
		}
		c.virtualServer(p, name, ip, sp.Port, pick(sp.ExternalPolicyLocal))
		if !c.s.isNodeAddress(ip) {
			p.binds = append(p.binds, ip)
		}
	}

	if sp.NodePort != 0 {
		if len(c.nodePort) == 0 {
			return
		}
		var set, localSet string
		var entries []string
		switch sp.Protocol {
		case corev1.ProtocolTCP:
			set, localSet = SetNodePortTCP, SetNodePortLocalTCP
			entries = []string{strconv.Itoa(int(sp.NodePort))}
		case corev1.ProtocolUDP:
			set, localSet = SetNodePortUDP, SetNodePortLocalUDP
			entries = []string{strconv.Itoa(int(sp.NodePort))}
		case corev1.ProtocolSCTP:
			set, localSet = SetNodePortSCTP, SetNodePortLocalSCTP
			for _, ip := range c.nodePort {
				entries = append(entries, ipPort(ip, proto, sp.NodePort))
			}
		}
		for _, e := range entries {
			p.add(set, e)
			if sp.ExternalPolicyLocal {
				p.add(localSet, e)
			}
		}
		for _, ip := range c.nodePort {
			c.virtualServer(p, name, ip, sp.NodePort, pick(sp.ExternalPolicyLocal))
		}
	}

	if sp.HealthCheckNodePort != 0 {
		p.add(SetHealthCheckNodePort, strconv.Itoa(int(sp.HealthCheckNodePort)))
	}
}

// virtualServer adds one IPVS service. Upstream: the VirtualServer literals
// of syncProxyRules and syncEndpoint.
func (c *computer) virtualServer(p *piece, name string, ip netip.Addr, port int32, eps []model.Endpoint) {
	sp := p.sp
	vs := kernel.VirtualServer{
		Address:   ip,
		Protocol:  kernel.Protocol(sp.Protocol),
		Port:      uint16(port),
		Scheduler: c.sched,
	}
	if sp.SessionAffinity == corev1.ServiceAffinityClientIP {
		vs.Flags |= kernel.FlagPersistent
		vs.Timeout = uint32(sp.StickyMaxAgeSeconds)
	}
	if c.sched == "mh" {
		vs.Flags |= kernel.FlagSourceHash
	}
	if slices.ContainsFunc(p.vss, func(d DesiredVirtualServer) bool { return d.SameKey(vs) }) {
		return
	}
	rss := make([]kernel.RealServer, 0, len(eps))
	for _, ep := range eps {
		weight := 1 // upstream's fixed weight
		if ep.Weight > 0 {
			weight = int(ep.Weight) // svclab's model.WeightsAnnotation, for wrr/wlc
		}
		rss = append(rss, kernel.RealServer{Address: ep.IP, Port: uint16(ep.Port), Weight: weight})
	}
	slices.SortFunc(rss, compareRealServers)
	rss = slices.CompactFunc(rss, kernel.RealServer.SameKey)
	p.vss = append(p.vss, DesiredVirtualServer{VirtualServer: vs, Service: name, RealServers: rss})
}

// compareVirtualServers is the order of Desired.VirtualServers: by
// address, protocol and port.
func compareVirtualServers(a, b DesiredVirtualServer) int {
	if x := a.Address.Compare(b.Address); x != 0 {
		return x
	}
	if x := cmp.Compare(a.Protocol, b.Protocol); x != 0 {
		return x
	}
	return cmp.Compare(a.Port, b.Port)
}

func compareRealServers(a, b kernel.RealServer) int {
	if x := a.Address.Compare(b.Address); x != 0 {
		return x
	}
	return cmp.Compare(a.Port, b.Port)
}
