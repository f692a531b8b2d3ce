package ipvs

import (
	"strconv"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// payload is the iptables-restore payload renderRules writes: a nat and a
// filter section, each step of renderRules appending its rules to them.
type payload struct {
	settings    *Settings
	desired     *Desired
	mark        string // the masquerade mark, as upstream spells it
	nat, filter lines
}

// empty reports whether the desired set holds no entry: the rules matching
// it are then left out.
func (p *payload) empty(set string) bool { return len(p.desired.Set(set).Entries) == 0 }

// name is the proxier's name of a set of Sets (KUBE-6-* for IPv6).
func (p *payload) name(set string) string { return p.desired.Set(set).Name }

// setComment is a set's comment, quoted, for the rules that match it.
func setComment(set string) string { return quote(Sets[setIndex[set]].Comment) }

// declareChains opens both sections with their chains (created, or flushed
// when they exist).
func (p *payload) declareChains() {
	p.nat.write("*nat")
	for _, c := range natChains {
		p.nat.write(":" + c + " - [0:0]")
	}
	p.filter.write("*filter")
	for _, c := range filterChains {
		p.filter.write(":" + c + " - [0:0]")
	}
}

// leaveLoopbackAlone: connections from the node's loopback (127.0.0.0/8,
// or ::1/128 for IPv6) are not services' business.
func (p *payload) leaveLoopbackAlone() {
	p.nat.write("-A", ChainServices, "-s", loopbackCIDR(p.desired.Family), "-j", "RETURN")
}

// matchSets writes setMatchRules, each for a set that is not empty.
func (p *payload) matchSets() {
	for _, r := range setMatchRules {
		if p.empty(r.set) {
			continue
		}
		args := []string{"-A", r.from}
		if r.protocol != "" {
			args = append(args, "-p", r.protocol)
		}
		args = append(args, "-m", "comment", "--comment", setComment(r.set), "-m", "set", "--match-set", p.name(r.set), r.matchType, "-j", r.to)
		if r.table == "filter" {
			p.filter.write(args...)
		} else {
			p.nat.write(args...)
		}
	}
}

// masqueradeClusterIPs marks for masquerade the traffic to cluster IPs that
// needs it: all of it (masqueradeAll), what does not come from a pod (with
// a local-traffic detector), or else what the node sends from a service
// address.
func (p *payload) masqueradeClusterIPs() {
	if p.empty(SetClusterIP) {
		return
	}
	s := p.settings
	args := []string{"-A", ChainServices, "-m", "comment", "--comment", setComment(SetClusterIP), "-m", "set", "--match-set", p.name(SetClusterIP)}
	switch {
	case s.MasqueradeAll:
		args = append(args, "dst,dst")
	case s.LocalDetector.Implemented():
		// Masquerade traffic to a cluster IP that does not come from a
		// pod (a node, or a router with a static route to the service
		// range).
		args = append(append(args, "dst,dst"), s.LocalDetector.IfNotLocal...)
	default:
		// Without a pod range: masquerade what the node sends from a
		// service address (the kube-ipvs0 addresses make the kernel pick a
		// VIP as source for VIP destinations).
		args = append(args, "src,dst")
	}
	p.nat.write(append(args, "-j", ChainMarkMasq)...)
}

// acceptExternalIPs marks traffic to external IPs for masquerade (Cluster
// policy only) and accepts it.
func (p *payload) acceptExternalIPs() {
	if !p.empty(SetExternalIP) {
		args := []string{"-A", ChainServices, "-m", "comment", "--comment", setComment(SetExternalIP), "-m", "set", "--match-set", p.name(SetExternalIP), "dst,dst"}
		p.nat.write(append(args, "-j", ChainMarkMasq)...)
		p.acceptExternalIP(args)
	}
	if !p.empty(SetExternalIPLocal) {
		p.acceptExternalIP([]string{"-A", ChainServices, "-m", "comment", "--comment", setComment(SetExternalIPLocal), "-m", "set", "--match-set", p.name(SetExternalIPLocal), "dst,dst"})
	}
}

// acceptExternalIP accepts traffic to external IPs (match) from off the
// machine (not from a bridge, not from a local process) and traffic to
// ones the node holds itself.
func (p *payload) acceptExternalIP(match []string) {
	p.nat.write(append(match, "-m", "physdev", "!", "--physdev-is-in", "-m", "addrtype", "!", "--src-type", "LOCAL", "-j", "ACCEPT")...)
	p.nat.write(append(match, "-m", "addrtype", "--dst-type", "LOCAL", "-j", "ACCEPT")...)
}

// sendToNodePortsAndLoadBalancers: traffic to the node's own addresses
// goes to the node port chain; load balancer traffic is masqueraded.
func (p *payload) sendToNodePortsAndLoadBalancers() {
	p.nat.write("-A", ChainServices, "-m", "addrtype", "--dst-type", "LOCAL", "-j", ChainNodePort)
	p.nat.write("-A", ChainLoadBalancer, "-j", ChainMarkMasq)
}

// dropOutsideSourceRanges ends the source ranges firewall: what no range
// returned is dropped.
func (p *payload) dropOutsideSourceRanges() {
	p.filter.write("-A", ChainSourceRangesFirewall, "-j", "DROP")
}

// refuseNodeAccess drops the node's own traffic to the virtual servers in
// entries (a load balancer whose source ranges leave the node out).
func (p *payload) refuseNodeAccess(entries []kernel.Entry) {
	for _, e := range entries {
		ip := e.IP.String()
		p.filter.write("-A", ChainIPVSOutFilter, "-s", ip, "-m", "ipvs", "--vaddr", ip, "--vproto", e.Protocol.Lower(),
			"--vport", strconv.Itoa(int(e.Port)), "-j", "DROP")
	}
}

// acceptIPVSTraffic accepts what IPVS will handle, in case later rules
// would drop it. Upstream: acceptIPVSTraffic.
func (p *payload) acceptIPVSTraffic() {
	for _, set := range []string{SetClusterIP, SetLoadBalancer} {
		if !p.empty(set) {
			p.nat.write("-A", ChainServices, "-m", "set", "--match-set", p.name(set), "dst,dst", "-j", "ACCEPT")
		}
	}
}

// acceptForwarded accepts forwarded service traffic: marked packets and
// their connections' replies.
func (p *payload) acceptForwarded() {
	p.filter.write("-A", ChainForward, "-m", "comment", "--comment", quote("kubernetes forwarding rules"),
		"-m", "mark", "--mark", p.mark+"/"+p.mark, "-j", "ACCEPT")
	p.filter.write("-A", ChainForward, "-m", "comment", "--comment", quote("kubernetes forwarding conntrack rule"),
		"-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")
}

// acceptHealthChecks accepts traffic to the health check node ports.
func (p *payload) acceptHealthChecks() {
	p.filter.write("-A", ChainNodePort, "-m", "comment", "--comment", setComment(SetHealthCheckNodePort),
		"-m", "set", "--match-set", p.name(SetHealthCheckNodePort), "dst", "-j", "ACCEPT")
}

// refuseUnknownPorts rejects new connections to a service address on a
// port no service has (kubernetes/kubernetes#72236).
func (p *payload) refuseUnknownPorts() {
	for _, set := range []string{SetLoadBalancer, SetClusterIP, SetExternalIP, SetExternalIPLocal} {
		p.filter.write("-A", ChainIPVSFilter, "-m", "set", "--match-set", p.name(set), "dst,dst", "-j", "RETURN")
	}
	p.filter.write("-A", ChainIPVSFilter, "-m", "set", "--match-set", p.name(SetHealthCheckNodePort), "dst", "-j", "RETURN")
	p.filter.write("-A", ChainIPVSFilter, "-m", "conntrack", "--ctstate", "NEW", "-m", "set", "--match-set", p.name(SetIPVSIPs), "dst", "-j", "REJECT")
}

// masqueradeMarked masquerades the packets KUBE-MARK-MASQ marked, clearing
// the mark first so that a packet that goes through the stack again is not
// masqueraded twice, and writes KUBE-MARK-MASQ itself.
func (p *payload) masqueradeMarked() {
	p.nat.write("-A", ChainPostrouting, "-m", "mark", "!", "--mark", p.mark+"/"+p.mark, "-j", "RETURN")
	p.nat.write("-A", ChainPostrouting, "-j", "MARK", "--xor-mark", p.mark)
	masq := []string{"-A", ChainPostrouting, "-m", "comment", "--comment", quote("kubernetes service traffic requiring SNAT"), "-j", "MASQUERADE"}
	if p.settings.RandomFully {
		masq = append(masq, "--random-fully")
	}
	p.nat.write(masq...)
	p.nat.write("-A", ChainMarkMasq, "-j", "MARK", "--or-mark", p.mark)
}

// commit closes both sections and joins them: nat, then filter.
func (p *payload) commit() []byte {
	p.filter.write("COMMIT")
	p.nat.write("COMMIT")
	return append(p.nat, p.filter...)
}
