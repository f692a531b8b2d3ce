package ipvs

import (
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// JumpRule is a rule in a built-in chain that enters one of the mode's
// chains; see proxy/iptables/kernel.JumpRule.
type JumpRule = iptkernel.JumpRule

// jumpRules are upstream's iptablesJumpChain, ensured (iptables -C, then
// -I) before a full sync.
var jumpRules = []JumpRule{
	{Table: "nat", Chain: "OUTPUT", Target: ChainServices, Comment: "kubernetes service portals"},
	{Table: "nat", Chain: "PREROUTING", Target: ChainServices, Comment: "kubernetes service portals"},
	{Table: "nat", Chain: "POSTROUTING", Target: ChainPostrouting, Comment: "kubernetes postrouting rules"},
	{Table: "filter", Chain: "FORWARD", Target: ChainForward, Comment: "kubernetes forwarding rules"},
	{Table: "filter", Chain: "INPUT", Target: ChainNodePort, Comment: "kubernetes health check rules"},
	{Table: "filter", Chain: "INPUT", Target: ChainProxyFirewall, Comment: "kube-proxy firewall rules"},
	{Table: "filter", Chain: "FORWARD", Target: ChainProxyFirewall, Comment: "kube-proxy firewall rules"},
	{Table: "filter", Chain: "INPUT", Target: ChainIPVSFilter, Comment: "kubernetes ipvs access filter"},
	{Table: "filter", Chain: "OUTPUT", Target: ChainIPVSOutFilter, Comment: "kubernetes ipvs access filter"},
}

// JumpRules returns the jumps from built-in chains the payload assumes.
func JumpRules() []JumpRule { return append([]JumpRule(nil), jumpRules...) }

// lines writes iptables-restore lines, arguments separated by spaces.
// Upstream: proxyutil.LineBuffer.
type lines []byte

func (l *lines) write(args ...string) {
	for i, a := range args {
		if i > 0 {
			*l = append(*l, ' ')
		}
		*l = append(*l, a...)
	}
	*l = append(*l, '\n')
}

func quote(s string) string { return `"` + s + `"` }

// renderRules writes the iptables-restore payload: the nat table, then the
// filter table, each with its chain declarations first — rule for rule
// what upstream's createAndLinkKubeChain and writeIptablesRules write. The
// rules match ipsets rather than addresses, so the payload's size does not
// grow with the number of services. Each step writes its rules to the end
// of the nat or the filter section (rulesteps.go); the order of the steps
// is the order of the rules in each section.
func renderRules(s *Settings, d *Desired, noNodeAccess []kernel.Entry) []byte {
	p := &payload{settings: s, desired: d, mark: s.masqueradeMark()}
	p.declareChains()
	p.leaveLoopbackAlone()
	p.matchSets()
	p.masqueradeClusterIPs()
	p.acceptExternalIPs()
	p.sendToNodePortsAndLoadBalancers()
	p.dropOutsideSourceRanges()
	p.refuseNodeAccess(noNodeAccess)
	p.acceptIPVSTraffic()
	p.acceptForwarded()
	p.acceptHealthChecks()
	p.refuseUnknownPorts()
	p.masqueradeMarked()
	return p.commit()
}
