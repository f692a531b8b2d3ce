package iptables

import (
	"github.com/svclab/svclab/proxy/iptables/chains"
	"github.com/svclab/svclab/proxy/model"
)

// servicePlan is what upstream's syncProxyRules works out for one service
// port before writing any rule: its chains, its usable endpoints, and which
// chains and filter rules it needs. Field names follow upstream's local
// variables.
type servicePlan struct {
	sp           *model.ServicePort
	name         string // "ns/svc:port", in comments and hashes
	protocol     string // "tcp", "udp" or "sctp"
	largeCluster bool   // leave out per-endpoint comments

	clusterPolicyChain   string // KUBE-SVC-: endpoints under the Cluster policy
	localPolicyChain     string // KUBE-SVL-: endpoints under the Local policy
	externalTrafficChain string // KUBE-EXT-: entry for external destinations
	fwChain              string // KUBE-FW-: loadBalancerSourceRanges

	clusterEndpoints, localEndpoints, reachableEndpoints []model.Endpoint

	hasEndpoints         bool // usable endpoints anywhere in the cluster
	hasInternalEndpoints bool // cluster IP traffic has somewhere to go
	hasExternalEndpoints bool // external traffic has somewhere to go

	usesClusterPolicyChain   bool
	usesLocalPolicyChain     bool
	usesExternalTrafficChain bool
	usesFWChain              bool

	internalTrafficChain     string // where KUBE-SERVICES sends the cluster IP
	externalPolicyChain      string // where the EXT chain ends
	loadBalancerTrafficChain string // where KUBE-SERVICES sends load balancer IPs

	// What the filter table does with traffic that has nowhere to go:
	// REJECT without any endpoint, DROP without a local one.
	internalFilterTarget, internalFilterSuffix string
	externalFilterTarget, externalFilterSuffix string
}

// newServicePlan mirrors the first half of upstream's per-service loop.
// hash is the service port's chain hash suffix.
func newServicePlan(sp *model.ServicePort, name, protocol, hash string, largeCluster bool) *servicePlan {
	p := &servicePlan{
		sp:                   sp,
		name:                 name,
		protocol:             protocol,
		largeCluster:         largeCluster,
		clusterPolicyChain:   chains.PrefixServiceCluster + hash,
		localPolicyChain:     chains.PrefixServiceLocal + hash,
		externalTrafficChain: chains.PrefixExternal + hash,
		fwChain:              chains.PrefixFirewall + hash,
	}
	p.clusterEndpoints, p.localEndpoints, p.reachableEndpoints, p.hasEndpoints = model.CategorizeEndpoints(sp)
	p.usesClusterPolicyChain = len(p.clusterEndpoints) > 0 && sp.UsesClusterEndpoints()
	p.usesLocalPolicyChain = len(p.localEndpoints) > 0 && sp.UsesLocalEndpoints()

	// Internal (cluster IP) traffic goes to the Cluster or Local chain.
	p.internalTrafficChain = p.clusterPolicyChain
	p.hasInternalEndpoints = p.hasEndpoints
	if sp.InternalPolicyLocal {
		p.internalTrafficChain = p.localPolicyChain
		if len(p.localEndpoints) == 0 {
			p.hasInternalEndpoints = false
		}
	}

	// External traffic always enters the EXT chain, which ends in the
	// Cluster or Local chain.
	p.externalPolicyChain = p.clusterPolicyChain
	p.hasExternalEndpoints = p.hasEndpoints
	if sp.ExternalPolicyLocal {
		p.externalPolicyChain = p.localPolicyChain
		if len(p.localEndpoints) == 0 {
			p.hasExternalEndpoints = false
		}
	}
	// The EXT chain exists even without external endpoints, for the
	// short-circuit rules of locally originated traffic.
	p.usesExternalTrafficChain = p.hasEndpoints && sp.ExternallyAccessible()

	p.loadBalancerTrafficChain = p.externalTrafficChain
	p.usesFWChain = p.hasEndpoints && len(sp.LoadBalancerVIPs) > 0 && len(sp.LoadBalancerSourceRanges) > 0
	if p.usesFWChain {
		p.loadBalancerTrafficChain = p.fwChain
	}

	if !p.hasEndpoints {
		p.internalFilterTarget, p.internalFilterSuffix = "REJECT", " has no endpoints"
		p.externalFilterTarget, p.externalFilterSuffix = "REJECT", " has no endpoints"
	} else {
		if !p.hasInternalEndpoints {
			p.internalFilterTarget, p.internalFilterSuffix = "DROP", " has no local endpoints"
		}
		if !p.hasExternalEndpoints {
			p.externalFilterTarget, p.externalFilterSuffix = "DROP", " has no local endpoints"
		}
	}
	return p
}
