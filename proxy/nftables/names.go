package nftables

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"

	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/model"
)

// TableName is the one table kube-proxy's nftables mode owns, in the ip and
// the ip6 family. Every chain, set and map is inside it, so their names
// carry no "kube-" prefix.
const TableName = "kube-proxy"

// Names of the fixed chains, sets and maps (upstream's constants).
const (
	filterPreroutingPreDNATChain = "filter-prerouting-pre-dnat"
	filterOutputPreDNATChain     = "filter-output-pre-dnat"
	filterInputChain             = "filter-input"
	filterForwardChain           = "filter-forward"
	filterOutputChain            = "filter-output"
	natPreroutingChain           = "nat-prerouting"
	natOutputChain               = "nat-output"
	natPostroutingChain          = "nat-postrouting"

	servicesChain       = "services"
	serviceIPsMap       = "service-ips"
	serviceNodePortsMap = "service-nodeports"
	nodePortIPsSet      = "nodeport-ips"
	clusterIPsSet       = "cluster-ips"

	serviceEndpointsCheckChain  = "service-endpoints-check"
	nodePortEndpointsCheckChain = "nodeport-endpoints-check"
	noEndpointServicesMap       = "no-endpoint-services"
	noEndpointNodePortsMap      = "no-endpoint-nodeports"
	rejectChain                 = "reject-chain"
	clusterIPsCheckChain        = "cluster-ips-check"

	firewallIPsMap     = "firewall-ips"
	firewallCheckChain = "firewall-check"

	masqueradingChain     = "masquerading"
	hairpinConnectionsSet = "hairpin-connections"
)

// Prefixes of the per-service-port and per-endpoint names. The rest of the
// name is hashAndTruncate of "namespace/name/protocol/port" (and
// "__IP/port" for endpoints), e.g. "service-ULMVA6XW-ns1/svc1/tcp/p80".
const (
	clusterPolicyChainPrefix = "service-"
	localPolicyChainPrefix   = "local-"
	externalChainPrefix      = "external-"
	endpointChainPrefix      = "endpoint-"
	affinitySetPrefix        = "affinity-"
	firewallChainPrefix      = "firewall-"

	// chainNamePrefixLengthMax bounds the prefixes above, hyphen included.
	chainNamePrefixLengthMax = 16
	chainNameBaseLengthMax   = knftables.NameLengthMax - chainNamePrefixLengthMax
)

// hashAndTruncate prefixes name with 8 base32 characters of its SHA-256 and
// truncates the result to chainNameBaseLengthMax, as upstream.
func hashAndTruncate(name string) string {
	hash := sha256.Sum256([]byte(name))
	encoded := base32.StdEncoding.EncodeToString(hash[:])
	name = encoded[:8] + "-" + name
	if len(name) > chainNameBaseLengthMax {
		name = name[:chainNameBaseLengthMax-3] + "..."
	}
	return name
}

// servicePortNameBase is "HASH-namespace/name/protocol/port".
func servicePortNameBase(n model.ServicePortName) string {
	return hashAndTruncate(n.Namespace + "/" + n.Name + "/" + strings.ToLower(string(n.Protocol)) + "/" + n.Port)
}

// endpointNameBase is "HASH-namespace/name/protocol/port__IP/port", the
// colons of an IPv6 address written as dots.
func endpointNameBase(n model.ServicePortName, ep model.Endpoint) string {
	ip := strings.ReplaceAll(ep.IP.String(), ":", ".")
	return hashAndTruncate(n.Namespace + "/" + n.Name + "/" + strings.ToLower(string(n.Protocol)) + "/" + n.Port +
		"__" + ip + "/" + itoa(ep.Port))
}

// isServiceChainName tells per-service and per-endpoint chains (all hold a
// "/") from the fixed ones.
func isServiceChainName(chain string) bool { return strings.Contains(chain, "/") }

func isAffinitySetName(set string) bool { return strings.HasPrefix(set, affinitySetPrefix) }

// portNames are the chain names of one service port.
type portNames struct {
	cluster, local, external, firewall string
}

func namesOf(n model.ServicePortName) portNames {
	base := servicePortNameBase(n)
	return portNames{
		cluster:  clusterPolicyChainPrefix + base,
		local:    localPolicyChainPrefix + base,
		external: externalChainPrefix + base,
		firewall: firewallChainPrefix + base,
	}
}

// endpointNames are an endpoint's chain and affinity set.
func endpointNames(n model.ServicePortName, ep model.Endpoint) (chain, affinitySet string) {
	base := endpointNameBase(n, ep)
	return endpointChainPrefix + base, affinitySetPrefix + base
}
