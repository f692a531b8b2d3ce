package iptables

import "github.com/svclab/svclab/proxy/iptables/chains"

// writeFixedSections renders the parts of every payload that do not depend
// on services.
func (r *Renderer) writeFixedSections() {
	mark := r.mark

	h := &r.filterHeader
	h.line("*filter")
	for _, c := range []string{chains.Services, chains.ExternalServices, chains.Forward, chains.NodePorts, chains.ProxyFirewall} {
		h.chainLine(c)
	}
	if r.opts.LocalhostNodePorts { // IPv4 only: see localhostNodePortsInEffect
		// Kubelet writes the same rule; it blocks the security hole
		// route_localnet opens (https://issue.k8s.io/90259).
		h.chainLine(chains.KubeletFirewall)
		h.line("-A", chains.KubeletFirewall, "-m", "comment", "--comment", `"block incoming localnet connections"`,
			"-d", "127.0.0.0/8", "!", "-s", "127.0.0.0/8", "-m", "conntrack", "!", "--ctstate", "RELATED,ESTABLISHED,DNAT", "-j", "DROP")
	}

	f := &r.filterFooter
	if !r.opts.ConntrackTCPBeLiberal {
		// Out-of-window packets would otherwise reset connections
		// (kubernetes/kubernetes#74839).
		f.line("-A", chains.Forward, "-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP")
	}
	f.line("-A", chains.Forward, "-m", "comment", "--comment", `"kubernetes forwarding rules"`,
		"-m", "mark", "--mark", mark+"/"+mark, "-j", "ACCEPT")
	f.line("-A", chains.Forward, "-m", "comment", "--comment", `"kubernetes forwarding conntrack rule"`,
		"-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")
	f.line("COMMIT")

	n := &r.natHeader
	n.line("*nat")
	for _, c := range []string{chains.Services, chains.NodePorts, chains.Postrouting, chains.MarkMasq} {
		n.chainLine(c)
	}

	p := &r.natPostrouting
	p.line("-A", chains.Postrouting, "-m", "mark", "!", "--mark", mark+"/"+mark, "-j", "RETURN")
	// Clear the mark so a packet that loops through the stack again is not
	// masqueraded twice.
	p.line("-A", chains.Postrouting, "-j", "MARK", "--xor-mark", mark)
	p.words("-A", chains.Postrouting, "-m", "comment", "--comment", `"kubernetes service traffic requiring SNAT"`, "-j", "MASQUERADE")
	if r.opts.RandomFully {
		p.word("--random-fully")
	}
	p.end()
	p.line("-A", chains.MarkMasq, "-j", "MARK", "--or-mark", mark)

	// The tail call to KUBE-NODEPORTS must be the last rule of
	// KUBE-SERVICES.
	t := &r.natFooter
	const comment = `"kubernetes service nodeports; NOTE: this must be the last rule in this chain"`
	if r.opts.nodePortsOnAllAddresses() {
		t.words("-A", chains.Services, "-m", "comment", "--comment", comment, "-m", "addrtype", "--dst-type", "LOCAL")
		// Localhost node ports never work on IPv6, and on IPv4 only with
		// route_localnet.
		if r.opts.isIPv6() {
			t.words("!", "-d", "::1/128")
		} else if !r.opts.LocalhostNodePorts {
			t.words("!", "-d", "127.0.0.0/8")
		}
		t.line("-j", chains.NodePorts)
	} else {
		for _, ip := range r.opts.NodePortAddresses {
			// LocalhostNodePorts is never in effect for IPv6.
			if ip.IsLoopback() && !r.opts.LocalhostNodePorts {
				continue
			}
			t.words("-A", chains.Services, "-m", "comment", "--comment", comment, "-d")
			t.addr(ip)
			t.line("-j", chains.NodePorts)
		}
	}
	t.line("COMMIT")
}
