package iptables

// Built-in chains kube-proxy hooks into.
const (
	chainInput       = "INPUT"
	chainForward     = "FORWARD"
	chainOutput      = "OUTPUT"
	chainPrerouting  = "PREROUTING"
	chainPostrouting = "POSTROUTING"
)

// JumpRule is a rule in a built-in chain that sends packets into one of
// kube-proxy's chains, such as
//
//	-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
//
// These cannot be part of a --noflush restore: declaring PREROUTING would
// flush everyone else's rules in it, and appending would add a duplicate on
// every sync. Like upstream, they are ensured one by one with `iptables -C`
// and `iptables -I` before a full sync.
type JumpRule struct {
	Table string
	// Chain is the built-in chain the rule goes in.
	Chain string
	// Target is the kube-proxy chain it jumps to.
	Target string
	// Comment is the rule's comment; may be empty.
	Comment string
	// Match holds extra matches that come before the comment.
	Match []string
}

// Args are the rule's arguments after "-A CHAIN" (or -C/-I), as upstream
// builds them: matches, comment, jump.
func (j JumpRule) Args() []string {
	args := append([]string(nil), j.Match...)
	if j.Comment != "" {
		args = append(args, "-m", "comment", "--comment", j.Comment)
	}
	return append(args, "-j", j.Target)
}

// newConntrack matches packets that start a connection.
var newConntrack = []string{"-m", "conntrack", "--ctstate", "NEW"}

// JumpRules lists the jumps from built-in chains that the payloads assume.
// Upstream: iptablesJumpChains plus kubelet's KUBE-FIREWALL jumps
// (iptablesKubeletJumpChains), which upstream ensures on every full sync
// whether or not localhost node ports are on (the chain then stays empty).
func (r *Renderer) JumpRules() []JumpRule {
	return []JumpRule{
		{TableFilter, chainInput, ChainExternalServices, "kubernetes externally-visible service portals", newConntrack},
		{TableFilter, chainForward, ChainExternalServices, "kubernetes externally-visible service portals", newConntrack},
		{TableFilter, chainInput, ChainNodePorts, "kubernetes health check service ports", nil},
		{TableFilter, chainForward, ChainServices, "kubernetes service portals", newConntrack},
		{TableFilter, chainOutput, ChainServices, "kubernetes service portals", newConntrack},
		{TableFilter, chainForward, ChainForward, "kubernetes forwarding rules", nil},
		{TableFilter, chainInput, ChainProxyFirewall, "kubernetes load balancer firewall", newConntrack},
		{TableFilter, chainOutput, ChainProxyFirewall, "kubernetes load balancer firewall", newConntrack},
		{TableFilter, chainForward, ChainProxyFirewall, "kubernetes load balancer firewall", newConntrack},
		{TableNAT, chainOutput, ChainServices, "kubernetes service portals", nil},
		{TableNAT, chainPrerouting, ChainServices, "kubernetes service portals", nil},
		{TableNAT, chainPostrouting, ChainPostrouting, "kubernetes postrouting rules", nil},
		{TableFilter, chainInput, ChainKubeletFirewall, "", nil},
		{TableFilter, chainOutput, ChainKubeletFirewall, "", nil},
	}
}
