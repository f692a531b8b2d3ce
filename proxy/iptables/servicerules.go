package iptables

import (
	"bytes"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/iptables/chains"
	"github.com/svclab/svclab/proxy/iptables/localtraffic"
	"github.com/svclab/svclab/proxy/model"
)

// fragmentWriter renders service ports into fragments. It owns scratch
// buffers that are reused from one service port to the next.
type fragmentWriter struct {
	opts          *Options
	detector      *localtraffic.Detector
	probabilities *probabilities

	filter, shared, decls, rules lineBuf
	hashInput                    []byte
}

// render writes one service port, in the order of upstream's per-service
// loop in syncProxyRules (pkg/proxy/iptables/proxier.go).
func (w *fragmentWriter) render(sp *model.ServicePort, largeCluster bool) *fragment {
	w.filter.reset()
	w.shared.reset()
	w.decls.reset()
	w.rules.reset()

	name := sp.Name.String()
	protocol := lowerProtocol(sp.Protocol)
	w.hashInput = append(append(w.hashInput[:0], name...), protocol...)
	p := newServicePlan(sp, name, protocol, string(appendHashSuffix(nil, w.hashInput)), largeCluster)
	chains := make([]string, 0, len(p.reachableEndpoints)+3)

	w.writeClusterIPCapture(p)
	w.writeExternalIPCaptures(p)
	w.writeLoadBalancerCaptures(p)
	w.writeNodePortCapture(p)
	w.writeHealthCheckNodePort(p)
	w.writeInternalMasquerade(p)
	if p.usesExternalTrafficChain {
		chains = append(chains, p.externalTrafficChain)
		w.writeExternalChain(p)
	}
	if p.usesFWChain {
		chains = append(chains, p.fwChain)
		w.writeFirewallChain(p)
	}
	endpointChains := w.endpointChainNames(name, protocol, p.reachableEndpoints)
	if p.usesClusterPolicyChain {
		chains = append(chains, p.clusterPolicyChain)
		w.decls.chainLine(p.clusterPolicyChain)
		w.serviceToEndpointRules(p, p.clusterPolicyChain, p.clusterEndpoints, endpointChains)
	}
	if p.usesLocalPolicyChain {
		chains = append(chains, p.localPolicyChain)
		w.decls.chainLine(p.localPolicyChain)
		w.serviceToEndpointRules(p, p.localPolicyChain, p.localEndpoints, endpointChains)
	}
	for i, ep := range p.reachableEndpoints {
		chains = append(chains, endpointChains.names[i])
		w.writeEndpointChain(p, endpointChains.names[i], ep)
	}
	return w.pack(sp, largeCluster, chains)
}

// writeClusterIPCapture sends the cluster IP to its chain (nat), or drops
// or rejects it when there is nowhere to go (filter).
func (w *fragmentWriter) writeClusterIPCapture(p *servicePlan) {
	if p.hasInternalEndpoints {
		w.shared.words("-A", chains.Services, "-m", "comment", "--comment")
		w.shared.quoted("", p.name, " cluster IP")
		w.protoDest(&w.shared, p.protocol, p.sp.ClusterIP, p.sp.Port)
		w.shared.line("-j", p.internalTrafficChain)
		return
	}
	w.filter.words("-A", chains.Services, "-m", "comment", "--comment")
	w.filter.quoted("", p.name, p.internalFilterSuffix)
	w.protoDest(&w.filter, p.protocol, p.sp.ClusterIP, p.sp.Port)
	w.filter.line("-j", p.internalFilterTarget)
}

// writeExternalIPCaptures sends each external IP to the EXT chain, and
// drops or rejects what would find no endpoint.
func (w *fragmentWriter) writeExternalIPCaptures(p *servicePlan) {
	for _, ip := range p.sp.ExternalIPs {
		if p.hasEndpoints {
			w.shared.words("-A", chains.Services, "-m", "comment", "--comment")
			w.shared.quoted("", p.name, " external IP")
			w.protoDest(&w.shared, p.protocol, ip, p.sp.Port)
			w.shared.line("-j", p.externalTrafficChain)
		}
		if !p.hasExternalEndpoints {
			w.writeExternalFilterRule(p, ip)
		}
	}
}

// writeLoadBalancerCaptures sends each load balancer IP to the EXT (or FW)
// chain; with source ranges, filter drops what the FW chain let through
// untranslated.
func (w *fragmentWriter) writeLoadBalancerCaptures(p *servicePlan) {
	for _, ip := range p.sp.LoadBalancerVIPs {
		if p.hasEndpoints {
			w.shared.words("-A", chains.Services, "-m", "comment", "--comment")
			w.shared.quoted("", p.name, " loadbalancer IP")
			w.protoDest(&w.shared, p.protocol, ip, p.sp.Port)
			w.shared.line("-j", p.loadBalancerTrafficChain)
		}
		if p.usesFWChain {
			w.filter.words("-A", chains.ProxyFirewall, "-m", "comment", "--comment")
			w.filter.quoted("", p.name, " traffic not accepted by "+p.fwChain)
			w.protoDest(&w.filter, p.protocol, ip, p.sp.Port)
			w.filter.line("-j", "DROP")
		}
	}
	if !p.hasExternalEndpoints {
		for _, ip := range p.sp.LoadBalancerVIPs {
			w.writeExternalFilterRule(p, ip)
		}
	}
}

// writeExternalFilterRule drops or rejects traffic to an external address
// that has nowhere to go.
func (w *fragmentWriter) writeExternalFilterRule(p *servicePlan, ip netip.Addr) {
	w.filter.words("-A", chains.ExternalServices, "-m", "comment", "--comment")
	w.filter.quoted("", p.name, p.externalFilterSuffix)
	w.protoDest(&w.filter, p.protocol, ip, p.sp.Port)
	w.filter.line("-j", p.externalFilterTarget)
}

// writeNodePortCapture sends the node port to the EXT chain. (Upstream
// adds a second, 127.0.0.0/8 rule only to count localhost node port
// packets with nfacct, which we leave out; this rule matches localhost
// too.)
func (w *fragmentWriter) writeNodePortCapture(p *servicePlan) {
	if p.sp.NodePort == 0 {
		return
	}
	if p.hasEndpoints {
		w.shared.words("-A", chains.NodePorts, "-m", "comment", "--comment", p.name, "-m", p.protocol, "-p", p.protocol, "--dport")
		w.shared.int(p.sp.NodePort)
		w.shared.line("-j", p.externalTrafficChain)
	}
	if !p.hasExternalEndpoints {
		w.filter.words("-A", chains.ExternalServices, "-m", "comment", "--comment")
		w.filter.quoted("", p.name, p.externalFilterSuffix)
		w.filter.words("-m", "addrtype", "--dst-type", "LOCAL", "-m", p.protocol, "-p", p.protocol, "--dport")
		w.filter.int(p.sp.NodePort)
		w.filter.line("-j", p.externalFilterTarget)
	}
}

// writeHealthCheckNodePort accepts the health check node port, whether or
// not there are local endpoints.
func (w *fragmentWriter) writeHealthCheckNodePort(p *servicePlan) {
	if p.sp.HealthCheckNodePort == 0 {
		return
	}
	w.filter.words("-A", chains.NodePorts, "-m", "comment", "--comment")
	w.filter.quoted("", p.name, " health check node port")
	w.filter.words("-m", "tcp", "-p", "tcp", "--dport")
	w.filter.int(p.sp.HealthCheckNodePort)
	w.filter.line("-j", "ACCEPT")
}

// writeInternalMasquerade marks cluster IP traffic from outside the pod
// network (or all of it with MasqueradeAll) for SNAT: a node may route
// the service range for off-cluster clients, and replies must come back
// through it.
func (w *fragmentWriter) writeInternalMasquerade(p *servicePlan) {
	if !p.hasInternalEndpoints || !(w.opts.MasqueradeAll || w.detector.Implemented()) {
		return
	}
	w.rules.words("-A", p.internalTrafficChain, "-m", "comment", "--comment")
	w.rules.quoted("", p.name, " cluster IP")
	w.protoDest(&w.rules, p.protocol, p.sp.ClusterIP, p.sp.Port)
	if !w.opts.MasqueradeAll {
		w.rules.words(w.detector.IfNotLocal...)
	}
	w.rules.line("-j", chains.MarkMasq)
}

// writeExternalChain fills KUBE-EXT-: with the Cluster policy it
// masquerades everything (endpoints may be on other nodes); with the Local
// policy it keeps the client IP, except that pod and node traffic
// short-circuits to the Cluster chain, as if it had gone out to a load
// balancer and come back.
func (w *fragmentWriter) writeExternalChain(p *servicePlan) {
	ext := p.externalTrafficChain
	w.decls.chainLine(ext)
	if !p.sp.ExternalPolicyLocal {
		w.rules.words("-A", ext, "-m", "comment", "--comment")
		w.rules.quoted("masquerade traffic for ", p.name, " external destinations")
		w.rules.line("-j", chains.MarkMasq)
	} else {
		if w.detector.Implemented() {
			w.rules.words("-A", ext, "-m", "comment", "--comment")
			w.rules.quoted("pod traffic for ", p.name, " external destinations")
			w.rules.words(w.detector.IfLocal...)
			w.rules.line("-j", p.clusterPolicyChain)
		}
		// The node's own traffic gets a local source address: masquerade
		// it and send it to the Cluster chain.
		w.rules.words("-A", ext, "-m", "comment", "--comment")
		w.rules.quoted("masquerade LOCAL traffic for ", p.name, " external destinations")
		w.rules.line("-m", "addrtype", "--src-type", "LOCAL", "-j", chains.MarkMasq)
		w.rules.words("-A", ext, "-m", "comment", "--comment")
		w.rules.quoted("route LOCAL traffic for ", p.name, " external destinations")
		w.rules.line("-m", "addrtype", "--src-type", "LOCAL", "-j", p.clusterPolicyChain)
	}
	if p.hasExternalEndpoints {
		w.rules.line("-A", ext, "-j", p.externalPolicyChain)
	}
}

// writeFirewallChain fills KUBE-FW-: allowed source ranges go on to the EXT
// chain; the rest falls through untranslated and KUBE-PROXY-FIREWALL in
// filter drops it.
func (w *fragmentWriter) writeFirewallChain(p *servicePlan) {
	w.decls.chainLine(p.fwChain)
	allowFromNode := false
	for _, cidr := range p.sp.LoadBalancerSourceRanges {
		w.rules.words("-A", p.fwChain, "-m", "comment", "--comment")
		w.rules.quoted("", p.name, " loadbalancer IP")
		w.rules.word("-s")
		w.rules.prefix(cidr)
		w.rules.line("-j", p.externalTrafficChain)
		if w.opts.NodeIP.IsValid() && cidr.Contains(w.opts.NodeIP) {
			allowFromNode = true
		}
	}
	// A VIP routed locally makes node-to-VIP packets arrive with the VIP
	// as source.
	if allowFromNode {
		for _, ip := range p.sp.LoadBalancerVIPs {
			w.rules.words("-A", p.fwChain, "-m", "comment", "--comment")
			w.rules.quoted("", p.name, " loadbalancer IP")
			w.rules.word("-s")
			w.rules.addr(ip)
			w.rules.line("-j", p.externalTrafficChain)
		}
	}
	w.rules.words("-A", p.fwChain, "-m", "comment", "--comment")
	w.rules.quoted("other traffic to ", p.name, " will be dropped by KUBE-PROXY-FIREWALL")
	w.rules.end()
}

// writeEndpointChain writes one KUBE-SEP- chain: masquerade hairpin traffic
// (an endpoint reaching itself through the service), remember the client
// for session affinity, DNAT. Most of a large payload is these lines, so
// they are appended directly rather than word by word.
func (w *fragmentWriter) writeEndpointChain(p *servicePlan, chain string, ep model.Endpoint) {
	w.decls.chainLine(chain)
	b := append(w.rules.b, "-A "...)
	b = append(b, chain...)
	if !p.largeCluster {
		b = append(b, " -m comment --comment "...)
		b = append(b, p.name...)
	}
	b = append(b, " -s "...)
	b = ep.IP.AppendTo(b)
	b = append(b, " -j "+chains.MarkMasq+"\n-A "...)
	b = append(b, chain...)
	if !p.largeCluster {
		b = append(b, " -m comment --comment "...)
		b = append(b, p.name...)
	}
	if p.sp.SessionAffinity == corev1.ServiceAffinityClientIP {
		b = append(b, " -m recent --name "...)
		b = append(b, chain...)
		b = append(b, " --set"...)
	}
	b = append(b, " -m "...)
	b = append(b, p.protocol...)
	b = append(b, " -p "...)
	b = append(b, p.protocol...)
	b = append(b, " -j DNAT --to-destination "...)
	b = appendEndpoint(b, ep)
	w.rules.b = append(b, '\n')
	w.rules.lines += 2
}

// protoDest writes the match of a service address: "-m tcp -p tcp -d IP
// --dport PORT".
func (w *fragmentWriter) protoDest(l *lineBuf, protocol string, ip netip.Addr, port int32) {
	l.words("-m", protocol, "-p", protocol, "-d")
	l.addr(ip)
	l.word("--dport")
	l.int(port)
}

// serviceToEndpointRules writes the session affinity checks and then the
// probability ladder from a service chain to its endpoints' chains: with n
// endpoints the i-th rule (from 0) matches with probability 1/(n-i), and
// the last one always. Upstream: writeServiceToEndpointRules.
func (w *fragmentWriter) serviceToEndpointRules(p *servicePlan, svcChain string, endpoints []model.Endpoint, index endpointChainIndex) {
	names := index.namesFor(endpoints)
	if p.sp.SessionAffinity == corev1.ServiceAffinityClientIP {
		for i, ep := range endpoints {
			chain := names[i]
			w.rules.words("-A", svcChain)
			if !p.largeCluster {
				w.endpointComment(p.name, ep)
			}
			w.rules.words("-m", "recent", "--name", chain, "--rcheck", "--seconds")
			w.rules.int(p.sp.StickyMaxAgeSeconds)
			w.rules.line("--reap", "-j", chain)
		}
	}
	n := len(endpoints)
	for i, ep := range endpoints {
		b := append(w.rules.b, "-A "...)
		b = append(b, svcChain...)
		w.rules.b = b
		if !p.largeCluster {
			w.endpointComment(p.name, ep)
		}
		b = w.rules.b
		if i < n-1 {
			b = append(b, " -m statistic --mode random --probability "...)
			b = append(b, w.probabilities.of(n-i)...)
		}
		b = append(b, " -j "...)
		b = append(b, names[i]...)
		w.rules.b = append(b, '\n')
		w.rules.lines++
	}
}

// endpointComment writes `-m comment --comment "ns/svc:port -> IP:port"`.
func (w *fragmentWriter) endpointComment(name string, ep model.Endpoint) {
	w.rules.words("-m", "comment", "--comment")
	w.rules.word(`"`)
	w.rules.b = append(w.rules.b, name...)
	w.rules.b = append(w.rules.b, " -> "...)
	w.rules.b = appendEndpoint(w.rules.b, ep)
	w.rules.b = append(w.rules.b, '"')
}

// endpointChainIndex maps the reachable endpoints to their KUBE-SEP chains.
type endpointChainIndex struct {
	endpoints []model.Endpoint
	names     []string
}

// namesFor returns the chain names of list, a subset of the reachable
// endpoints, in list order.
func (x endpointChainIndex) namesFor(list []model.Endpoint) []string {
	if len(list) == len(x.endpoints) && (len(list) == 0 || &list[0] == &x.endpoints[0]) {
		return x.names // the same slice: the common case
	}
	byAddr := make(map[netip.AddrPort]string, len(x.endpoints))
	for i, ep := range x.endpoints {
		byAddr[netip.AddrPortFrom(ep.IP, uint16(ep.Port))] = x.names[i]
	}
	out := make([]string, len(list))
	for i, ep := range list {
		out[i] = byAddr[netip.AddrPortFrom(ep.IP, uint16(ep.Port))]
	}
	return out
}

func (w *fragmentWriter) endpointChainNames(name, protocol string, reachable []model.Endpoint) endpointChainIndex {
	// All names go into one string, sliced per endpoint: one allocation
	// instead of one per endpoint.
	const nameLen = len(chains.PrefixEndpoint) + 16
	all := make([]byte, 0, nameLen*len(reachable))
	for _, ep := range reachable {
		w.hashInput = append(append(w.hashInput[:0], name...), protocol...)
		w.hashInput = appendEndpoint(w.hashInput, ep)
		all = appendHashSuffix(append(all, chains.PrefixEndpoint...), w.hashInput)
	}
	joined := string(all)
	names := make([]string, len(reachable))
	for i := range reachable {
		names[i] = joined[i*nameLen : (i+1)*nameLen]
	}
	return endpointChainIndex{endpoints: reachable, names: names}
}

// lowerProtocol is strings.ToLower of the protocol, without allocating for
// the three protocols Kubernetes has.
func lowerProtocol(p corev1.Protocol) string {
	switch p {
	case corev1.ProtocolTCP:
		return "tcp"
	case corev1.ProtocolUDP:
		return "udp"
	case corev1.ProtocolSCTP:
		return "sctp"
	}
	return strings.ToLower(string(p))
}

// pack copies the four scratch sections into one right-sized fragment
// (bytes.Join does not zero the memory it then overwrites).
func (w *fragmentWriter) pack(sp *model.ServicePort, largeCluster bool, chains []string) *fragment {
	buf := bytes.Join([][]byte{w.filter.b, w.shared.b, w.decls.b, w.rules.b}, nil)
	filterEnd := len(w.filter.b)
	sharedEnd := filterEnd + len(w.shared.b)
	declEnd := sharedEnd + len(w.decls.b)
	return &fragment{
		sp:             sp,
		largeCluster:   largeCluster,
		buf:            buf,
		filterEnd:      filterEnd,
		sharedEnd:      sharedEnd,
		declEnd:        declEnd,
		filterLines:    w.filter.lines,
		sharedLines:    w.shared.lines,
		chainRuleLines: w.rules.lines,
		chains:         chains,
	}
}

// appendEndpoint appends "IP:port", the endpoint's identity string.
func appendEndpoint(b []byte, ep model.Endpoint) []byte {
	return netip.AddrPortFrom(ep.IP, uint16(ep.Port)).AppendTo(b)
}
