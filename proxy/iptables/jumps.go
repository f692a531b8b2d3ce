package iptables

import (
	"github.com/svclab/svclab/proxy/iptables/chains"
	"github.com/svclab/svclab/proxy/iptables/kernel"
)

// Built-in chains kube-proxy hooks into.
const (
	chainInput       = "INPUT"
	chainForward     = "FORWARD"
	chainOutput      = "OUTPUT"
	chainPrerouting  = "PREROUTING"
	chainPostrouting = "POSTROUTING"
)

// newConntrack matches packets that start a connection.
var newConntrack = []string{"-m", "conntrack", "--ctstate", "NEW"}

// JumpRules lists the jumps from built-in chains that the payloads assume.
// Upstream: iptablesJumpChains plus kubelet's KUBE-FIREWALL jumps
// (iptablesKubeletJumpChains), which upstream ensures on every full sync
// whether or not localhost node ports are on (the chain then stays empty).
func (r *Renderer) JumpRules() []kernel.JumpRule {
	return []kernel.JumpRule{
		{Table: TableFilter, Chain: chainInput, Target: chains.ExternalServices, Comment: "kubernetes externally-visible service portals", Match: newConntrack},
		{Table: TableFilter, Chain: chainForward, Target: chains.ExternalServices, Comment: "kubernetes externally-visible service portals", Match: newConntrack},
		{Table: TableFilter, Chain: chainInput, Target: chains.NodePorts, Comment: "kubernetes health check service ports"},
		{Table: TableFilter, Chain: chainForward, Target: chains.Services, Comment: "kubernetes service portals", Match: newConntrack},
		{Table: TableFilter, Chain: chainOutput, Target: chains.Services, Comment: "kubernetes service portals", Match: newConntrack},
		{Table: TableFilter, Chain: chainForward, Target: chains.Forward, Comment: "kubernetes forwarding rules"},
		{Table: TableFilter, Chain: chainInput, Target: chains.ProxyFirewall, Comment: "kubernetes load balancer firewall", Match: newConntrack},
		{Table: TableFilter, Chain: chainOutput, Target: chains.ProxyFirewall, Comment: "kubernetes load balancer firewall", Match: newConntrack},
		{Table: TableFilter, Chain: chainForward, Target: chains.ProxyFirewall, Comment: "kubernetes load balancer firewall", Match: newConntrack},
		{Table: TableNAT, Chain: chainOutput, Target: chains.Services, Comment: "kubernetes service portals"},
		{Table: TableNAT, Chain: chainPrerouting, Target: chains.Services, Comment: "kubernetes service portals"},
		{Table: TableNAT, Chain: chainPostrouting, Target: chains.Postrouting, Comment: "kubernetes postrouting rules"},
		{Table: TableFilter, Chain: chainInput, Target: chains.KubeletFirewall},
		{Table: TableFilter, Chain: chainOutput, Target: chains.KubeletFirewall},
	}
}
