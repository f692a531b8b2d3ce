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

// computer accumulates one Compute call.
type computer struct {
	s        *Settings
	sched    string
	nodePort []netip.Addr

	entries [][]string // per Sets index
	bind    map[netip.Addr]bool
	vs      map[string]int // VirtualServer.Key → index in out
	out     []DesiredVirtualServer
	// noNodeAccess are load balancer IP:ports whose source ranges leave
	// the node out (KUBE-IPVS-OUT-FILTER drops).
	noNodeAccess []kernel.Entry
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
	c := &computer{
		s:        &s,
		sched:    s.scheduler(),
		nodePort: s.nodePortIPs(),
		entries:  make([][]string, len(Sets)),
		bind:     map[netip.Addr]bool{},
		vs:       map[string]int{},
	}
	d := &Desired{Family: s.Family}
	if snap != nil {
		for _, sp := range snap.ServicePorts {
			c.servicePort(sp)
			d.ServicePorts++
			d.Endpoints += len(sp.Endpoints)
		}
	}
	for a := range c.bind {
		d.Addresses = append(d.Addresses, a)
		c.add(SetIPVSIPs, a.String())
	}
	slices.SortFunc(d.Addresses, netip.Addr.Compare)

	slices.SortFunc(c.out, func(a, b DesiredVirtualServer) int {
		if x := a.Address.Compare(b.Address); x != 0 {
			return x
		}
		if x := cmp.Compare(a.Protocol, b.Protocol); x != 0 {
			return x
		}
		return cmp.Compare(a.Port, b.Port)
	})
	d.VirtualServers = c.out

	d.Sets = make([]DesiredSet, len(Sets))
	for i, spec := range setsOf(s.Family) {
		e := c.entries[i]
		slices.Sort(e)
		d.Sets[i] = DesiredSet{SetSpec: spec, Entries: slices.Compact(e)}
	}
	d.IPTables = renderRules(&s, d, c.noNodeAccess)
	d.Jumps = jumpRules
	return d
}

func (c *computer) add(set, entry string) {
	i := setIndex[set]
	c.entries[i] = append(c.entries[i], entry)
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

func (c *computer) servicePort(sp *model.ServicePort) {
	proto := strings.ToLower(string(sp.Protocol))
	name := sp.Name.String()

	for _, ep := range sp.Endpoints {
		if ep.IsLocal {
			c.add(SetLoopBack, ipPort(ep.IP, proto, ep.Port)+","+ep.IP.String())
		}
	}

	cluster, local, _, _ := model.CategorizeEndpoints(sp)
	pick := func(onlyLocal bool) []model.Endpoint {
		if onlyLocal && len(local) > 0 {
			return local
		}
		return cluster
	}

	c.add(SetClusterIP, ipPort(sp.ClusterIP, proto, sp.Port))
	c.virtualServer(sp, name, sp.ClusterIP, sp.Port, pick(sp.InternalPolicyLocal))
	c.bind[sp.ClusterIP] = true

	for _, ip := range sp.ExternalIPs {
		if sp.ExternalPolicyLocal {
			c.add(SetExternalIPLocal, ipPort(ip, proto, sp.Port))
		} else {
			c.add(SetExternalIP, ipPort(ip, proto, sp.Port))
		}
		c.virtualServer(sp, name, ip, sp.Port, pick(sp.ExternalPolicyLocal))
		if !c.s.isNodeAddress(ip) {
			c.bind[ip] = true
		}
	}

	for _, ip := range sp.LoadBalancerVIPs {
		entry := ipPort(ip, proto, sp.Port)
		c.add(SetLoadBalancer, entry)
		if sp.ExternalPolicyLocal {
			c.add(SetLoadBalancerLocal, entry)
		}
		if len(sp.LoadBalancerSourceRanges) > 0 {
			c.add(SetLoadBalancerFW, entry)
			allowFromNode := false
			for _, cidr := range sp.LoadBalancerSourceRanges {
				c.add(SetLoadBalancerSourceCIDR, entry+","+setNet(cidr))
				if c.s.NodeIP.IsValid() && cidr.Contains(c.s.NodeIP) {
					allowFromNode = true
				}
			}
			if allowFromNode {
				// The node reaches its own load balancer IP through a
				// local route, with that IP as the source.
				c.add(SetLoadBalancerSourceIP, entry+","+ip.String())
			} else {
				c.noNodeAccess = append(c.noNodeAccess, kernel.Entry{IP: ip, Protocol: kernel.Protocol(sp.Protocol), Port: uint16(sp.Port)})
			}
		}
		c.virtualServer(sp, name, ip, sp.Port, pick(sp.ExternalPolicyLocal))
		if !c.s.isNodeAddress(ip) {
			c.bind[ip] = true
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
			c.add(set, e)
			if sp.ExternalPolicyLocal {
				c.add(localSet, e)
			}
		}
		for _, ip := range c.nodePort {
			c.virtualServer(sp, name, ip, sp.NodePort, pick(sp.ExternalPolicyLocal))
		}
	}

	if sp.HealthCheckNodePort != 0 {
		c.add(SetHealthCheckNodePort, strconv.Itoa(int(sp.HealthCheckNodePort)))
	}
}

// virtualServer adds one IPVS service. Upstream: the VirtualServer literals
// of syncProxyRules and syncEndpoint.
func (c *computer) virtualServer(sp *model.ServicePort, name string, ip netip.Addr, port int32, eps []model.Endpoint) {
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
	key := vs.Key()
	if _, dup := c.vs[key]; dup {
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
	c.vs[key] = len(c.out)
	c.out = append(c.out, DesiredVirtualServer{VirtualServer: vs, Service: name, RealServers: rss})
}

func compareRealServers(a, b kernel.RealServer) int {
	if x := a.Address.Compare(b.Address); x != 0 {
		return x
	}
	return cmp.Compare(a.Port, b.Port)
}
