package ipvs

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/iptables/chains"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// DummyDevice is the device every service address is bound to, so that the
// node accepts packets for it and IPVS (hooked at LOCAL_IN) sees them.
// Upstream: defaultDummyDevice.
const DummyDevice = "kube-ipvs0"

// DefaultScheduler is used when ipvs.scheduler is empty.
const DefaultScheduler = "rr"

// iptables chains of the IPVS mode. Upstream: the constants at the top of
// pkg/proxy/ipvs/proxier.go. KUBE-SERVICES, KUBE-POSTROUTING,
// KUBE-MARK-MASQ, KUBE-FORWARD and KUBE-PROXY-FIREWALL are the iptables
// mode's chains of the same names (proxy/iptables/chains); the node port
// chain is KUBE-NODE-PORT here, KUBE-NODEPORTS (chains.NodePorts) there.
const (
	ChainServices             = chains.Services
	ChainProxyFirewall        = chains.ProxyFirewall
	ChainSourceRangesFirewall = "KUBE-SOURCE-RANGES-FIREWALL"
	ChainPostrouting          = chains.Postrouting
	ChainMarkMasq             = chains.MarkMasq
	ChainNodePort             = "KUBE-NODE-PORT"
	ChainForward              = chains.Forward
	ChainLoadBalancer         = "KUBE-LOAD-BALANCER"
	ChainIPVSFilter           = "KUBE-IPVS-FILTER"
	ChainIPVSOutFilter        = "KUBE-IPVS-OUT-FILTER"
)

// ipsets, with upstream's names and comments (pkg/proxy/ipvs/ipset.go).
// The comments appear in the iptables rules that match the sets. These
// are the IPv4 proxier's names; the IPv6 proxier's are KUBE-6-*
// (familySetName).
const (
	SetLoopBack               = "KUBE-LOOP-BACK"
	SetClusterIP              = "KUBE-CLUSTER-IP"
	SetExternalIP             = "KUBE-EXTERNAL-IP"
	SetExternalIPLocal        = "KUBE-EXTERNAL-IP-LOCAL"
	SetLoadBalancer           = "KUBE-LOAD-BALANCER"
	SetLoadBalancerLocal      = "KUBE-LOAD-BALANCER-LOCAL"
	SetLoadBalancerFW         = "KUBE-LOAD-BALANCER-FW"
	SetLoadBalancerSourceIP   = "KUBE-LOAD-BALANCER-SOURCE-IP"
	SetLoadBalancerSourceCIDR = "KUBE-LOAD-BALANCER-SOURCE-CIDR"
	SetNodePortTCP            = "KUBE-NODE-PORT-TCP"
	SetNodePortLocalTCP       = "KUBE-NODE-PORT-LOCAL-TCP"
	SetNodePortUDP            = "KUBE-NODE-PORT-UDP"
	SetNodePortLocalUDP       = "KUBE-NODE-PORT-LOCAL-UDP"
	SetNodePortSCTP           = "KUBE-NODE-PORT-SCTP-HASH"
	SetNodePortLocalSCTP      = "KUBE-NODE-PORT-LOCAL-SCTP-HASH"
	SetHealthCheckNodePort    = "KUBE-HEALTH-CHECK-NODE-PORT"
	SetIPVSIPs                = "KUBE-IPVS-IPS"
)

// SetSpec is one ipset the mode creates.
type SetSpec struct {
	Name    string
	Type    kernel.SetType
	Comment string
}

// Sets are every ipset the IPv4 proxier creates, in upstream's ipsetInfo
// order (the IPv6 proxier's: setsOf).
var Sets = []SetSpec{
	{SetLoopBack, kernel.HashIPPortIP, "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose"},
	{SetClusterIP, kernel.HashIPPort, "Kubernetes service cluster ip + port for masquerade purpose"},
	{SetExternalIP, kernel.HashIPPort, "Kubernetes service external ip + port for masquerade and filter purpose"},
	{SetExternalIPLocal, kernel.HashIPPort, "Kubernetes service external ip + port with externalTrafficPolicy=local"},
	{SetLoadBalancer, kernel.HashIPPort, "Kubernetes service lb portal"},
	{SetLoadBalancerFW, kernel.HashIPPort, "Kubernetes service load balancer ip + port for load balancer with sourceRange"},
	{SetLoadBalancerLocal, kernel.HashIPPort, "Kubernetes service load balancer ip + port with externalTrafficPolicy=local"},
	{SetLoadBalancerSourceIP, kernel.HashIPPortIP, "Kubernetes service load balancer ip + port + source IP for packet filter purpose"},
	{SetLoadBalancerSourceCIDR, kernel.HashIPPortNet, "Kubernetes service load balancer ip + port + source cidr for packet filter purpose"},
	{SetNodePortTCP, kernel.BitmapPort, "Kubernetes nodeport TCP port for masquerade purpose"},
	{SetNodePortLocalTCP, kernel.BitmapPort, "Kubernetes nodeport TCP port with externalTrafficPolicy=local"},
	{SetNodePortUDP, kernel.BitmapPort, "Kubernetes nodeport UDP port for masquerade purpose"},
	{SetNodePortLocalUDP, kernel.BitmapPort, "Kubernetes nodeport UDP port with externalTrafficPolicy=local"},
	{SetNodePortSCTP, kernel.HashIPPort, "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'"},
	{SetNodePortLocalSCTP, kernel.HashIPPort, "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'"},
	{SetHealthCheckNodePort, kernel.BitmapPort, "Kubernetes health check node port"},
	{SetIPVSIPs, kernel.HashIP, "Addresses on the ipvs interface"},
}

// setIndex maps a set name, the IPv4 or the IPv6 proxier's, to its
// position in Sets.
var setIndex = func() map[string]int {
	m := make(map[string]int, 2*len(Sets))
	for i, s := range Sets {
		m[s.Name] = i
		m[familySetName(corev1.IPv6Protocol, s.Name)] = i
	}
	return m
}()

// IsKubeProxySet reports whether name is one of the mode's ipsets, of
// either family (KUBE-CLUSTER-IP, KUBE-6-CLUSTER-IP).
func IsKubeProxySet(name string) bool {
	_, ok := setIndex[name]
	return ok
}

// setMatchRule is a rule that matches one set and jumps somewhere, written
// only when the set is not empty:
//
//	iptables -t nat -A KUBE-SERVICES -m set --match-set KUBE-LOAD-BALANCER dst,dst -j KUBE-LOAD-BALANCER
//
// Upstream: ipsetWithIptablesChain. The local node-port sets must come
// before the plain ones.
type setMatchRule struct {
	set, table, from, to, matchType, protocol string
}

var setMatchRules = []setMatchRule{
	{SetLoopBack, "nat", ChainPostrouting, "MASQUERADE", "dst,dst,src", ""},
	{SetLoadBalancer, "nat", ChainServices, ChainLoadBalancer, "dst,dst", ""},
	{SetLoadBalancerLocal, "nat", ChainLoadBalancer, "RETURN", "dst,dst", ""},
	{SetNodePortLocalTCP, "nat", ChainNodePort, "RETURN", "dst", "tcp"},
	{SetNodePortTCP, "nat", ChainNodePort, ChainMarkMasq, "dst", "tcp"},
	{SetNodePortLocalUDP, "nat", ChainNodePort, "RETURN", "dst", "udp"},
	{SetNodePortUDP, "nat", ChainNodePort, ChainMarkMasq, "dst", "udp"},
	{SetNodePortLocalSCTP, "nat", ChainNodePort, "RETURN", "dst,dst", "sctp"},
	{SetNodePortSCTP, "nat", ChainNodePort, ChainMarkMasq, "dst,dst", "sctp"},
	{SetLoadBalancerFW, "filter", ChainProxyFirewall, ChainSourceRangesFirewall, "dst,dst", ""},
	{SetLoadBalancerSourceCIDR, "filter", ChainSourceRangesFirewall, "RETURN", "dst,dst,src", ""},
	{SetLoadBalancerSourceIP, "filter", ChainSourceRangesFirewall, "RETURN", "dst,dst,src", ""},
}

// natChains and filterChains are declared (created or flushed) by every
// payload, in upstream's iptablesChains order.
var (
	natChains    = []string{ChainServices, ChainPostrouting, ChainNodePort, ChainLoadBalancer, ChainMarkMasq}
	filterChains = []string{ChainForward, ChainNodePort, ChainProxyFirewall, ChainSourceRangesFirewall, ChainIPVSFilter, ChainIPVSOutFilter}
)
