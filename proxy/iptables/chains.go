package iptables

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// Tables the renderer writes.
const (
	TableFilter = "filter"
	TableNAT    = "nat"
)

// Chains kube-proxy owns in full: it declares (and so flushes) them on every
// sync. Upstream: the constants at the top of proxier.go.
const (
	// ChainServices holds one rule per service IP:port (both tables).
	ChainServices = "KUBE-SERVICES"
	// ChainExternalServices (filter) drops or rejects external traffic
	// that has nowhere to go.
	ChainExternalServices = "KUBE-EXTERNAL-SERVICES"
	// ChainNodePorts holds one rule per node port (nat) and the health check
	// ACCEPTs (filter).
	ChainNodePorts = "KUBE-NODEPORTS"
	// ChainPostrouting masquerades marked packets (nat).
	ChainPostrouting = "KUBE-POSTROUTING"
	// ChainMarkMasq sets the masquerade mark (nat).
	ChainMarkMasq = "KUBE-MARK-MASQ"
	// ChainForward accepts forwarded service traffic (filter).
	ChainForward = "KUBE-FORWARD"
	// ChainProxyFirewall drops load balancer traffic outside the source
	// ranges (filter).
	ChainProxyFirewall = "KUBE-PROXY-FIREWALL"
	// ChainKubeletFirewall is kubelet's anti-martian chain; kube-proxy fills
	// it only when localhost node ports are on.
	ChainKubeletFirewall = "KUBE-FIREWALL"
)

// Prefixes of the per-service-port and per-endpoint chains.
const (
	prefixServiceCluster = "KUBE-SVC-" // endpoints under the Cluster policy
	prefixServiceLocal   = "KUBE-SVL-" // endpoints under the Local policy
	prefixFirewall       = "KUBE-FW-"  // loadBalancerSourceRanges
	prefixExternal       = "KUBE-EXT-" // external destinations
	prefixEndpoint       = "KUBE-SEP-" // one endpoint
)

// hashSuffix is the first 16 characters of base32(sha256(parts joined)).
// Chain names must stay within 28 characters. Upstream: portProtoHash and
// servicePortEndpointChainName.
func hashSuffix(parts ...string) string {
	return string(appendHashSuffix(nil, []byte(strings.Join(parts, ""))))
}

// appendHashSuffix appends hashSuffix of input to dst. The first 16 base32
// characters encode exactly the first 10 bytes of the digest.
func appendHashSuffix(dst, input []byte) []byte {
	sum := sha256.Sum256(input)
	return base32.StdEncoding.AppendEncode(dst, sum[:10])
}

// ServiceChainName is the KUBE-SVC- chain of a service port: the hash of its
// name string (model.ServicePortName.String) followed by the lowercase
// protocol. Upstream: servicePortPolicyClusterChain.
//
// Example: "default/kubernetes:https" + "tcp" → KUBE-SVC-NPX46M4PTMTKRN6Y.
func ServiceChainName(servicePortName, protocol string) string {
	return prefixServiceCluster + hashSuffix(servicePortName, protocol)
}

// LocalServiceChainName is the KUBE-SVL- chain (Local traffic policy
// endpoints). Upstream: servicePortPolicyLocalChainName.
func LocalServiceChainName(servicePortName, protocol string) string {
	return prefixServiceLocal + hashSuffix(servicePortName, protocol)
}

// ExternalChainName is the KUBE-EXT- chain that handles node port, external
// IP and load balancer traffic. Upstream: serviceExternalChainName.
func ExternalChainName(servicePortName, protocol string) string {
	return prefixExternal + hashSuffix(servicePortName, protocol)
}

// FirewallChainName is the KUBE-FW- chain implementing
// loadBalancerSourceRanges. Upstream: serviceFirewallChainName.
func FirewallChainName(servicePortName, protocol string) string {
	return prefixFirewall + hashSuffix(servicePortName, protocol)
}

// EndpointChainName is the KUBE-SEP- chain of one endpoint of a service
// port; endpoint is "IP:port". Upstream: servicePortEndpointChainName.
func EndpointChainName(servicePortName, protocol, endpoint string) string {
	return prefixEndpoint + hashSuffix(servicePortName, protocol, endpoint)
}

// IsServiceChain reports whether chain is one of the per-service chains
// (SVC, SVL, EXT, FW, SEP) that a full sync deletes when no service uses it
// any more. Upstream: isServiceChainName.
func IsServiceChain(chain string) bool {
	for _, p := range []string{prefixServiceCluster, prefixServiceLocal, prefixEndpoint, prefixFirewall, prefixExternal} {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}
