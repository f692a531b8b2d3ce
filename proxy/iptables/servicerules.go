package iptables

import (
	"bytes"
	"crypto/sha256"
	"net/netip"
	"encoding/base32"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/model"
)

// fragmentWriter renders service ports into fragments. It owns scratch
// buffers that are reused from one service port to the next.
type fragmentWriter struct {
	opts          *Options
	detector      *LocalDetector
	probabilities *probabilities

	filter, shared, decls, rules lineBuf
	hashInput                    []byte
}

// chainName is prefix + hashSuffix(parts...), without allocations other
// than the result.
func (w *fragmentWriter) chainName(prefix string, parts ...string) string {
	w.hashInput = w.hashInput[:0]
	for _, p := range parts {
		w.hashInput = append(w.hashInput, p...)
	}
	sum := sha256.Sum256(w.hashInput)
	// The first 16 base32 characters encode exactly the first 10 bytes.
	var enc [16]byte
	base32.StdEncoding.Encode(enc[:], sum[:10])
	return prefix + string(enc[:])
}

// render writes one service port. It follows the body of the per-service
// loop in upstream's syncProxyRules (pkg/proxy/iptables/proxier.go) line by
// line; the comments there name the same steps.
func (w *fragmentWriter) render(sp *model.ServicePort, largeCluster bool) *fragment {
	w.filter.reset()
	w.shared.reset()
	w.decls.reset()
	w.rules.reset()

	name := sp.Name.String()
	protocol := lowerProtocol(sp.Protocol)
	hash := w.chainName("", name, protocol)
	clusterPolicyChain := prefixServiceCluster + hash
	localPolicyChain := prefixServiceLocal + hash
	externalTrafficChain := prefixExternal + hash
	fwChain := prefixFirewall + hash
	chains := make([]string, 0, len(sp.Endpoints)+3)

	clusterEndpoints, localEndpoints, reachable, hasEndpoints := model.CategorizeEndpoints(sp)
	usesClusterPolicyChain := len(clusterEndpoints) > 0 && sp.UsesClusterEndpoints()
	usesLocalPolicyChain := len(localEndpoints) > 0 && sp.UsesLocalEndpoints()

	// Internal (cluster IP) traffic goes to the Cluster or Local chain.
	internalTrafficChain := clusterPolicyChain
	hasInternalEndpoints := hasEndpoints
	if sp.InternalPolicyLocal {
		internalTrafficChain = localPolicyChain
		if len(localEndpoints) == 0 {
			hasInternalEndpoints = false
		}
	}
	// External traffic always enters the EXT chain, which ends in the
	// Cluster or Local chain.
	externalPolicyChain := clusterPolicyChain
	hasExternalEndpoints := hasEndpoints
	if sp.ExternalPolicyLocal {
		externalPolicyChain = localPolicyChain
		if len(localEndpoints) == 0 {
			hasExternalEndpoints = false
		}
	}
	// The EXT chain exists even without external endpoints, for the
	// short-circuit rules of locally originated traffic.
	usesExternalTrafficChain := hasEndpoints && sp.ExternallyAccessible()

	loadBalancerTrafficChain := externalTrafficChain
	usesFWChain := hasEndpoints && len(sp.LoadBalancerVIPs) > 0 && len(sp.LoadBalancerSourceRanges) > 0
	if usesFWChain {
		loadBalancerTrafficChain = fwChain
	}

	// What the filter table does with traffic that has no endpoint to go to.
	var internalFilterTarget, internalFilterSuffix, externalFilterTarget, externalFilterSuffix string
	if !hasEndpoints {
		internalFilterTarget, internalFilterSuffix = "REJECT", " has no endpoints"
		externalFilterTarget, externalFilterSuffix = "REJECT", " has no endpoints"
	} else {
		if !hasInternalEndpoints {
			internalFilterTarget, internalFilterSuffix = "DROP", " has no local endpoints"
		}
		if !hasExternalEndpoints {
			externalFilterTarget, externalFilterSuffix = "DROP", " has no local endpoints"
		}
	}

	// Capture the cluster IP.
	if hasInternalEndpoints {
		w.shared.words("-A", ChainServices, "-m", "comment", "--comment")
		w.shared.quoted("", name, " cluster IP")
		w.protoDest(&w.shared, protocol, sp.ClusterIP, sp.Port)
		w.shared.line("-j", internalTrafficChain)
	} else {
		w.filter.words("-A", ChainServices, "-m", "comment", "--comment")
		w.filter.quoted("", name, internalFilterSuffix)
		w.protoDest(&w.filter, protocol, sp.ClusterIP, sp.Port)
		w.filter.line("-j", internalFilterTarget)
	}

	// Capture external IPs.
	for _, ip := range sp.ExternalIPs {
		if hasEndpoints {
			w.shared.words("-A", ChainServices, "-m", "comment", "--comment")
			w.shared.quoted("", name, " external IP")
			w.protoDest(&w.shared, protocol, ip, sp.Port)
			w.shared.line("-j", externalTrafficChain)
		}
		if !hasExternalEndpoints {
			w.filter.words("-A", ChainExternalServices, "-m", "comment", "--comment")
			w.filter.quoted("", name, externalFilterSuffix)
			w.protoDest(&w.filter, protocol, ip, sp.Port)
			w.filter.line("-j", externalFilterTarget)
		}
	}

	// Capture load balancer IPs.
	for _, ip := range sp.LoadBalancerVIPs {
		if hasEndpoints {
			w.shared.words("-A", ChainServices, "-m", "comment", "--comment")
			w.shared.quoted("", name, " loadbalancer IP")
			w.protoDest(&w.shared, protocol, ip, sp.Port)
			w.shared.line("-j", loadBalancerTrafficChain)
		}
		if usesFWChain {
			w.filter.words("-A", ChainProxyFirewall, "-m", "comment", "--comment")
			w.filter.quoted("", name, " traffic not accepted by "+fwChain)
			w.protoDest(&w.filter, protocol, ip, sp.Port)
			w.filter.line("-j", "DROP")
		}
	}
	if !hasExternalEndpoints {
		for _, ip := range sp.LoadBalancerVIPs {
			w.filter.words("-A", ChainExternalServices, "-m", "comment", "--comment")
			w.filter.quoted("", name, externalFilterSuffix)
			w.protoDest(&w.filter, protocol, ip, sp.Port)
			w.filter.line("-j", externalFilterTarget)
		}
	}

	// Capture node ports. (Upstream adds a second, 127.0.0.0/8 rule here
	// only when it counts localhost node port packets with nfacct, which we
	// leave out; the rule below matches localhost too.)
	if sp.NodePort != 0 {
		if hasEndpoints {
			w.shared.words("-A", ChainNodePorts, "-m", "comment", "--comment", name, "-m", protocol, "-p", protocol, "--dport")
			w.shared.int(sp.NodePort)
			w.shared.line("-j", externalTrafficChain)
		}
		if !hasExternalEndpoints {
			w.filter.words("-A", ChainExternalServices, "-m", "comment", "--comment")
			w.filter.quoted("", name, externalFilterSuffix)
			w.filter.words("-m", "addrtype", "--dst-type", "LOCAL", "-m", protocol, "-p", protocol, "--dport")
			w.filter.int(sp.NodePort)
			w.filter.line("-j", externalFilterTarget)
		}
	}

	// Capture the health check node port: always accepted.
	if sp.HealthCheckNodePort != 0 {
		w.filter.words("-A", ChainNodePorts, "-m", "comment", "--comment")
		w.filter.quoted("", name, " health check node port")
		w.filter.words("-m", "tcp", "-p", "tcp", "--dport")
		w.filter.int(sp.HealthCheckNodePort)
		w.filter.line("-j", "ACCEPT")
	}

	// Internal traffic: masquerade what comes from outside the cluster.
	if hasInternalEndpoints {
		if w.opts.MasqueradeAll || w.detector.Implemented() {
			w.rules.words("-A", internalTrafficChain, "-m", "comment", "--comment")
			w.rules.quoted("", name, " cluster IP")
			w.protoDest(&w.rules, protocol, sp.ClusterIP, sp.Port)
			if !w.opts.MasqueradeAll {
				w.rules.words(w.detector.IfNotLocal...)
			}
			w.rules.line("-j", ChainMarkMasq)
		}
	}

	// External traffic.
	if usesExternalTrafficChain {
		w.decls.chainLine(externalTrafficChain)
		chains = append(chains, externalTrafficChain)
		if !sp.ExternalPolicyLocal {
			// Endpoints may be on other nodes: masquerade so replies
			// come back through this node.
			w.rules.words("-A", externalTrafficChain, "-m", "comment", "--comment")
			w.rules.quoted("masquerade traffic for ", name, " external destinations")
			w.rules.line("-j", ChainMarkMasq)
		} else {
			// Only same-node endpoints: keep the client IP, except for
			// traffic from this node, which takes the Cluster path.
			if w.detector.Implemented() {
				w.rules.words("-A", externalTrafficChain, "-m", "comment", "--comment")
				w.rules.quoted("pod traffic for ", name, " external destinations")
				w.rules.words(w.detector.IfLocal...)
				w.rules.line("-j", clusterPolicyChain)
			}
			w.rules.words("-A", externalTrafficChain, "-m", "comment", "--comment")
			w.rules.quoted("masquerade LOCAL traffic for ", name, " external destinations")
			w.rules.line("-m", "addrtype", "--src-type", "LOCAL", "-j", ChainMarkMasq)
			w.rules.words("-A", externalTrafficChain, "-m", "comment", "--comment")
			w.rules.quoted("route LOCAL traffic for ", name, " external destinations")
			w.rules.line("-m", "addrtype", "--src-type", "LOCAL", "-j", clusterPolicyChain)
		}
		if hasExternalEndpoints {
			w.rules.line("-A", externalTrafficChain, "-j", externalPolicyChain)
		}
	}

	// Load balancer source ranges.
	if usesFWChain {
		w.decls.chainLine(fwChain)
		chains = append(chains, fwChain)
		allowFromNode := false
		for _, cidr := range sp.LoadBalancerSourceRanges {
			w.rules.words("-A", fwChain, "-m", "comment", "--comment")
			w.rules.quoted("", name, " loadbalancer IP")
			w.rules.word("-s")
			w.rules.prefix(cidr)
			w.rules.line("-j", externalTrafficChain)
			if w.opts.NodeIP.IsValid() && cidr.Contains(w.opts.NodeIP) {
				allowFromNode = true
			}
		}
		// A VIP routed locally makes node-to-VIP packets arrive with the
		// VIP as source.
		if allowFromNode {
			for _, ip := range sp.LoadBalancerVIPs {
				w.rules.words("-A", fwChain, "-m", "comment", "--comment")
				w.rules.quoted("", name, " loadbalancer IP")
				w.rules.word("-s")
				w.rules.addr(ip)
				w.rules.line("-j", externalTrafficChain)
			}
		}
		// Whatever is left is dropped by KUBE-PROXY-FIREWALL in filter.
		w.rules.words("-A", fwChain, "-m", "comment", "--comment")
		w.rules.quoted("other traffic to ", name, " will be dropped by KUBE-PROXY-FIREWALL")
		w.rules.end()
	}

	endpointChains := w.endpointChainNames(name, protocol, reachable)
	if usesClusterPolicyChain {
		w.decls.chainLine(clusterPolicyChain)
		chains = append(chains, clusterPolicyChain)
		w.serviceToEndpointRules(sp, name, clusterPolicyChain, clusterEndpoints, endpointChains, largeCluster)
	}
	if usesLocalPolicyChain {
		w.decls.chainLine(localPolicyChain)
		chains = append(chains, localPolicyChain)
		w.serviceToEndpointRules(sp, name, localPolicyChain, localEndpoints, endpointChains, largeCluster)
	}

	// One chain per endpoint. This loop writes most of a large payload, so
	// it appends directly instead of word by word.
	for i, ep := range reachable {
		chain := endpointChains.names[i]
		w.decls.chainLine(chain)
		chains = append(chains, chain)

		// Hairpin: an endpoint reaching itself through the service.
		b := append(w.rules.b, "-A "...)
		b = append(b, chain...)
		if !largeCluster {
			b = append(b, " -m comment --comment "...)
			b = append(b, name...)
		}
		b = append(b, " -s "...)
		b = ep.IP.AppendTo(b)
		b = append(b, " -j "+ChainMarkMasq+"\n-A "...)
		b = append(b, chain...)
		if !largeCluster {
			b = append(b, " -m comment --comment "...)
			b = append(b, name...)
		}
		if sp.SessionAffinity == corev1.ServiceAffinityClientIP {
			b = append(b, " -m recent --name "...)
			b = append(b, chain...)
			b = append(b, " --set"...)
		}
		b = append(b, " -m "...)
		b = append(b, protocol...)
		b = append(b, " -p "...)
		b = append(b, protocol...)
		b = append(b, " -j DNAT --to-destination "...)
		b = appendEndpoint(b, ep)
		w.rules.b = append(b, '\n')
		w.rules.lines += 2
	}

	return w.pack(sp, largeCluster, chains)
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
func (w *fragmentWriter) serviceToEndpointRules(sp *model.ServicePort, name, svcChain string, endpoints []model.Endpoint, index endpointChainIndex, largeCluster bool) {
	names := index.namesFor(endpoints)
	if sp.SessionAffinity == corev1.ServiceAffinityClientIP {
		for i, ep := range endpoints {
			chain := names[i]
			w.rules.words("-A", svcChain)
			if !largeCluster {
				w.endpointComment(name, ep)
			}
			w.rules.words("-m", "recent", "--name", chain, "--rcheck", "--seconds")
			w.rules.int(sp.StickyMaxAgeSeconds)
			w.rules.line("--reap", "-j", chain)
		}
	}
	n := len(endpoints)
	for i, ep := range endpoints {
		b := append(w.rules.b, "-A "...)
		b = append(b, svcChain...)
		w.rules.b = b
		if !largeCluster {
			w.endpointComment(name, ep)
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
	const nameLen = len(prefixEndpoint) + 16
	all := make([]byte, 0, nameLen*len(reachable))
	for _, ep := range reachable {
		w.hashInput = append(append(w.hashInput[:0], name...), protocol...)
		w.hashInput = appendEndpoint(w.hashInput, ep)
		sum := sha256.Sum256(w.hashInput)
		all = append(all, prefixEndpoint...)
		all = base32.StdEncoding.AppendEncode(all, sum[:10])
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
