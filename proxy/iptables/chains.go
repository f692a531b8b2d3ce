package iptables

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"

	"github.com/svclab/svclab/proxy/iptables/chains"
)

// Tables the renderer writes.
const (
	TableFilter = "filter"
	TableNAT    = "nat"
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
	return chains.PrefixServiceCluster + hashSuffix(servicePortName, protocol)
}

// LocalServiceChainName is the KUBE-SVL- chain (Local traffic policy
// endpoints). Upstream: servicePortPolicyLocalChainName.
func LocalServiceChainName(servicePortName, protocol string) string {
	return chains.PrefixServiceLocal + hashSuffix(servicePortName, protocol)
}

// ExternalChainName is the KUBE-EXT- chain that handles node port, external
// IP and load balancer traffic. Upstream: serviceExternalChainName.
func ExternalChainName(servicePortName, protocol string) string {
	return chains.PrefixExternal + hashSuffix(servicePortName, protocol)
}

// FirewallChainName is the KUBE-FW- chain implementing
// loadBalancerSourceRanges. Upstream: serviceFirewallChainName.
func FirewallChainName(servicePortName, protocol string) string {
	return chains.PrefixFirewall + hashSuffix(servicePortName, protocol)
}

// EndpointChainName is the KUBE-SEP- chain of one endpoint of a service
// port; endpoint is "IP:port". Upstream: servicePortEndpointChainName.
func EndpointChainName(servicePortName, protocol, endpoint string) string {
	return chains.PrefixEndpoint + hashSuffix(servicePortName, protocol, endpoint)
}
