package ipvs

import (
	"strconv"

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
// grow with the number of services.
func renderRules(s *Settings, d *Desired, noNodeAccess []kernel.Entry) []byte {
	empty := func(set string) bool { return len(d.Set(set).Entries) == 0 }
	comment := func(set string) string { return quote(Sets[setIndex[set]].Comment) }
	mark := s.masqueradeMark()

	var nat, filter lines
	nat.write("*nat")
	for _, c := range natChains {
		nat.write(":" + c + " - [0:0]")
	}
	filter.write("*filter")
	for _, c := range filterChains {
		filter.write(":" + c + " - [0:0]")
	}

	// Connections from the node's loopback are not services' business.
	nat.write("-A", ChainServices, "-s", "127.0.0.0/8", "-j", "RETURN")

	for _, r := range setMatchRules {
		if empty(r.set) {
			continue
		}
		args := []string{"-A", r.from}
		if r.protocol != "" {
			args = append(args, "-p", r.protocol)
		}
		args = append(args, "-m", "comment", "--comment", comment(r.set), "-m", "set", "--match-set", r.set, r.matchType, "-j", r.to)
		if r.table == "filter" {
			filter.write(args...)
		} else {
			nat.write(args...)
		}
	}

	if !empty(SetClusterIP) {
		args := []string{"-A", ChainServices, "-m", "comment", "--comment", comment(SetClusterIP), "-m", "set", "--match-set", SetClusterIP}
		switch {
		case s.MasqueradeAll:
			args = append(args, "dst,dst")
		case s.LocalDetector.Implemented():
			// Masquerade traffic to a cluster IP that does not come from
			// a pod (a node, or a router with a static route to the
			// service range).
			args = append(append(args, "dst,dst"), s.LocalDetector.IfNotLocal...)
		default:
			// Without a pod range: masquerade what the node sends from a
			// service address (the kube-ipvs0 addresses make the kernel
			// pick a VIP as source for VIP destinations).
			args = append(args, "src,dst")
		}
		nat.write(append(args, "-j", ChainMarkMasq)...)
	}

	externalIPRules := func(args []string) {
		// Accept traffic to external IPs from off the machine (not from a
		// bridge, not from a local process) and traffic to ones the node
		// holds itself.
		nat.write(append(args, "-m", "physdev", "!", "--physdev-is-in", "-m", "addrtype", "!", "--src-type", "LOCAL", "-j", "ACCEPT")...)
		nat.write(append(args, "-m", "addrtype", "--dst-type", "LOCAL", "-j", "ACCEPT")...)
	}
	if !empty(SetExternalIP) {
		args := []string{"-A", ChainServices, "-m", "comment", "--comment", comment(SetExternalIP), "-m", "set", "--match-set", SetExternalIP, "dst,dst"}
		nat.write(append(args, "-j", ChainMarkMasq)...)
		externalIPRules(args)
	}
	if !empty(SetExternalIPLocal) {
		externalIPRules([]string{"-A", ChainServices, "-m", "comment", "--comment", comment(SetExternalIPLocal), "-m", "set", "--match-set", SetExternalIPLocal, "dst,dst"})
	}

	nat.write("-A", ChainServices, "-m", "addrtype", "--dst-type", "LOCAL", "-j", ChainNodePort)
	nat.write("-A", ChainLoadBalancer, "-j", ChainMarkMasq)
	filter.write("-A", ChainSourceRangesFirewall, "-j", "DROP")
	for _, e := range noNodeAccess {
		ip := e.IP.String()
		filter.write("-A", ChainIPVSOutFilter, "-s", ip, "-m", "ipvs", "--vaddr", ip, "--vproto", e.Protocol.Lower(),
			"--vport", strconv.Itoa(int(e.Port)), "-j", "DROP")
	}

	// Accept what IPVS will handle, in case later rules would drop it.
	// Upstream: acceptIPVSTraffic.
	for _, set := range []string{SetClusterIP, SetLoadBalancer} {
		if !empty(set) {
			nat.write("-A", ChainServices, "-m", "set", "--match-set", set, "dst,dst", "-j", "ACCEPT")
		}
	}

	filter.write("-A", ChainForward, "-m", "comment", "--comment", quote("kubernetes forwarding rules"),
		"-m", "mark", "--mark", mark+"/"+mark, "-j", "ACCEPT")
	filter.write("-A", ChainForward, "-m", "comment", "--comment", quote("kubernetes forwarding conntrack rule"),
		"-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")
	filter.write("-A", ChainNodePort, "-m", "comment", "--comment", comment(SetHealthCheckNodePort),
		"-m", "set", "--match-set", SetHealthCheckNodePort, "dst", "-j", "ACCEPT")

	// Refuse new connections to a service address on a port no service
	// has (kubernetes/kubernetes#72236).
	for _, set := range []string{SetLoadBalancer, SetClusterIP, SetExternalIP, SetExternalIPLocal} {
		filter.write("-A", ChainIPVSFilter, "-m", "set", "--match-set", set, "dst,dst", "-j", "RETURN")
	}
	filter.write("-A", ChainIPVSFilter, "-m", "set", "--match-set", SetHealthCheckNodePort, "dst", "-j", "RETURN")
	filter.write("-A", ChainIPVSFilter, "-m", "conntrack", "--ctstate", "NEW", "-m", "set", "--match-set", SetIPVSIPs, "dst", "-j", "REJECT")

	nat.write("-A", ChainPostrouting, "-m", "mark", "!", "--mark", mark+"/"+mark, "-j", "RETURN")
	// Clear the mark so a packet that goes through the stack again is not
	// masqueraded twice.
	nat.write("-A", ChainPostrouting, "-j", "MARK", "--xor-mark", mark)
	masq := []string{"-A", ChainPostrouting, "-m", "comment", "--comment", quote("kubernetes service traffic requiring SNAT"), "-j", "MASQUERADE"}
	if s.RandomFully {
		masq = append(masq, "--random-fully")
	}
	nat.write(masq...)
	nat.write("-A", ChainMarkMasq, "-j", "MARK", "--or-mark", mark)

	filter.write("COMMIT")
	nat.write("COMMIT")
	return append(nat, filter...)
}
