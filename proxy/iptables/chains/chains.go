// Package chains spells the names of the iptables chains kube-proxy's
// iptables mode owns, once, for the packages that render, read or clean
// them: proxy/iptables (the mode), proxy/iptables/iptablestest (its packet
// tracer) and proxy/ipvs (which shares some of them and removes the others
// when it cleans up). It is a leaf: importing it does not pull in the mode.
//
// Upstream: the constants at the top of pkg/proxy/iptables/proxier.go and
// the chain name prefixes before servicePortPolicyClusterChain (k8s.io/kubernetes
// v1.36).
package chains

import "strings"

// Chains the iptables mode owns in full: it declares (and so flushes) them
// on every sync.
const (
	// Services holds one rule per service IP:port (nat and filter).
	// Upstream: kubeServicesChain.
	Services = "KUBE-SERVICES"
	// ExternalServices (filter) drops or rejects external traffic that has
	// nowhere to go. Upstream: kubeExternalServicesChain.
	ExternalServices = "KUBE-EXTERNAL-SERVICES"
	// NodePorts holds one rule per node port (nat) and the health check
	// ACCEPTs (filter). Upstream: kubeNodePortsChain.
	NodePorts = "KUBE-NODEPORTS"
	// Postrouting masquerades marked packets (nat). Upstream:
	// kubePostroutingChain.
	Postrouting = "KUBE-POSTROUTING"
	// MarkMasq sets the masquerade mark (nat). Upstream: kubeMarkMasqChain.
	MarkMasq = "KUBE-MARK-MASQ"
	// Forward accepts forwarded service traffic (filter). Upstream:
	// kubeForwardChain.
	Forward = "KUBE-FORWARD"
	// ProxyFirewall drops load balancer traffic outside the source ranges
	// (filter). Upstream: kubeProxyFirewallChain.
	ProxyFirewall = "KUBE-PROXY-FIREWALL"
)

// Chains the iptables mode uses but does not fill on every sync.
const (
	// KubeletFirewall is kubelet's anti-martian chain; kube-proxy fills it
	// only when localhost node ports are on. Upstream: kubeletFirewallChain.
	KubeletFirewall = "KUBE-FIREWALL"
	// ProxyCanary is the empty chain, in mangle, nat and filter, whose
	// disappearance tells that someone flushed the tables. Upstream:
	// kubeProxyCanaryChain.
	ProxyCanary = "KUBE-PROXY-CANARY"
)

// Prefixes of the per-service-port and per-endpoint chains; a hash of the
// service port (and endpoint) follows.
const (
	// PrefixServiceCluster: a service port's endpoints under the Cluster
	// traffic policy. Upstream: servicePortPolicyClusterChainNamePrefix.
	PrefixServiceCluster = "KUBE-SVC-"
	// PrefixServiceLocal: its endpoints under the Local policy. Upstream:
	// servicePortPolicyLocalChainNamePrefix.
	PrefixServiceLocal = "KUBE-SVL-"
	// PrefixFirewall: its loadBalancerSourceRanges. Upstream:
	// serviceFirewallChainNamePrefix.
	PrefixFirewall = "KUBE-FW-"
	// PrefixExternal: its external destinations. Upstream:
	// serviceExternalChainNamePrefix.
	PrefixExternal = "KUBE-EXT-"
	// PrefixEndpoint: one endpoint. Upstream:
	// servicePortEndpointChainNamePrefix.
	PrefixEndpoint = "KUBE-SEP-"
)

// perServicePrefixes are every per-service chain prefix.
var perServicePrefixes = []string{PrefixServiceCluster, PrefixServiceLocal, PrefixEndpoint, PrefixFirewall, PrefixExternal}

// IsPerService reports whether chain is one of the per-service chains (SVC,
// SVL, EXT, FW, SEP) that a full sync deletes when no service uses it any
// more. Upstream: isServiceChainName.
func IsPerService(chain string) bool {
	for _, p := range perServicePrefixes {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}
