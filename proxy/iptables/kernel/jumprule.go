package kernel

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
