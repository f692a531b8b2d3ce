package trace

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// MethodNote explains MethodCounters to the reader of a Result.
const MethodNote = "matched rules: the rules whose packet counters grew between `iptables-save -c` before and after the connection, " +
	"in each node's namespace (on a busy lab, other packets in that window count too); " +
	"rewrites: the connection's conntrack entry on each node (netlink); routes: `ip route get` in each namespace (netlink); " +
	"VXLAN peers: the neighbour and FDB entries of the VXLAN device"

// methodNote is MethodNote for a connection to dst: for IPv6 it names
// the programs whose answers an IPv6 connection's are (ip6tables-save,
// ip -6 route get).
func methodNote(dst netip.Addr) string {
	if !dst.Is6() {
		return MethodNote
	}
	return strings.NewReplacer("`iptables-save -c`", "`ip6tables-save -c`", "`ip route get`", "`ip -6 route get`").Replace(MethodNote)
}

// Analyze turns a Capture into a Result: it diffs each node's counters,
// orders the matched rules as a packet meets them, reads the rewrites from
// conntrack and confirms the KUBE-SEP chain whose DNAT target conntrack's
// reply tuple names.
func Analyze(c *Capture) (*Result, error) {
	if c.Method != MethodCounters {
		return nil, fmt.Errorf("trace capture: method %q: want %q", c.Method, MethodCounters)
	}
	r := &Result{
		Lab: c.Lab, Proto: c.Proto, From: c.From, To: c.To, Source: c.Source, ProxyMode: c.ProxyMode,
		Answer: c.Answer, Error: c.Error, Method: c.Method, MethodNote: methodNote(c.To.Addr()),
	}
	for i := range c.Hosts {
		h, err := analyzeHost(&c.Hosts[i])
		if err != nil {
			return nil, fmt.Errorf("trace capture: host %s: %w", c.Hosts[i].Host, err)
		}
		r.Hops = append(r.Hops, h)
	}
	r.Summary = summarize(r.Hops)
	return r, nil
}

// analyzeHost is one host's part of the Result.
func analyzeHost(hc *HostCapture) (Hop, error) {
	h := Hop{Host: hc.Host, Namespace: hc.Namespace, Role: hc.Role, Arrived: hc.Arrived, Local: hc.Local, Route: hc.Route, IPVS: hc.IPVS}
	var after []SavedTable
	if len(hc.Tables) > 0 {
		var before []SavedTable
		for _, t := range hc.Tables {
			b, err := ParseSave(t.Before)
			if err != nil {
				return h, fmt.Errorf("table %s before: %w", t.Table, err)
			}
			a, err := ParseSave(t.After)
			if err != nil {
				return h, fmt.Errorf("table %s after: %w", t.Table, err)
			}
			before, after = append(before, b...), append(after, a...)
		}
		hits, changed := Diff(before, after)
		h.Rules = orderHits(hits)
		h.Unchecked = changed
		if len(h.Rules) == 0 {
			h.Notes = append(h.Notes, "no rule's packet counter grew here")
		}
	}
	if f := hc.Conntrack; f != nil {
		h.Conntrack = f.String()
		// The tuples say what was rewritten. IPVS rewrites the destination
		// itself: conntrack (net.ipv4.vs.conntrack=1) records the real
		// server in the reply tuple without the DNAT status bit.
		if f.DstNAT() || f.Orig.Dst != f.Reply.Src {
			h.DNAT = &Rewrite{From: f.Orig.Dst, To: f.Reply.Src}
			h.DNAT.By, h.Notes = dnatChain(h.Rules, after, f.Reply.Src, h.Notes)
		}
		if f.SrcNAT() || f.Orig.Src != f.Reply.Dst {
			h.SNAT = &Rewrite{From: f.Orig.Src, To: f.Reply.Dst, By: snatChain(h.Rules)}
		}
		if hc.IPVS != nil && h.DNAT != nil {
			if slices.Contains(hc.IPVS.RealServers, f.Reply.Src.String()) {
				h.RealServer = f.Reply.Src.String()
				if h.DNAT.By == "" {
					h.DNAT.By = "IPVS " + hc.IPVS.Virtual
				}
			} else {
				h.Notes = append(h.Notes, fmt.Sprintf("conntrack's endpoint %s is not a real server of %s", f.Reply.Src, hc.IPVS.Virtual))
			}
		}
		if h.DNAT != nil && !f.DstNAT() {
			h.Notes = append(h.Notes, "the destination was rewritten without conntrack's DNAT status bit (IPVS does that; conntrack's reply tuple names the real server)")
		}
	} else if hc.Role == "node" {
		h.Notes = append(h.Notes, "no conntrack entry for this connection here")
	}
	return h, nil
}

// dnatChain finds the KUBE-SEP chain whose DNAT rule sends to endpoint:
// first among the matched rules, else among all rules (then says that its
// counters did not grow).
func dnatChain(hits []RuleHit, all []SavedTable, endpoint netip.AddrPort, notes []string) (string, []string) {
	for _, r := range hits {
		if r.Table == "nat" && dnatTarget(r.Spec) == endpoint.String() {
			return r.Chain, notes
		}
	}
	for _, t := range all {
		for _, r := range t.Rules {
			if t.Name == "nat" && strings.HasPrefix(r.Chain, "KUBE-SEP-") && dnatTarget(r.Spec) == endpoint.String() {
				return r.Chain, append(notes, fmt.Sprintf("conntrack's endpoint %s is %s's DNAT target, but that rule's counter did not grow", endpoint, r.Chain))
			}
		}
	}
	return "", notes
}

// snatChain is the chain of the matched MASQUERADE or SNAT rule.
func snatChain(hits []RuleHit) string {
	for _, r := range hits {
		if t := jumpTarget(r.Spec); r.Table == "nat" && (t == "MASQUERADE" || t == "SNAT") {
			return r.Chain
		}
	}
	return ""
}

// dnatTarget is a DNAT rule's --to-destination ("" for other rules).
func dnatTarget(spec string) string {
	if jumpTarget(spec) != "DNAT" {
		return ""
	}
	return argAfter(spec, "--to-destination")
}

// jumpTarget is the rule's -j (or -g) target.
func jumpTarget(spec string) string {
	if t := argAfter(spec, "-j"); t != "" {
		return t
	}
	return argAfter(spec, "-g")
}

func argAfter(spec, flag string) string {
	f := strings.Fields(spec)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == flag {
			return f[i+1]
		}
	}
	return ""
}

// hooks are the built-in chains in the order a forwarded or local packet
// meets them, and tables in the order each hook runs them.
var (
	hooks  = []string{"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"}
	tables = []string{"raw", "mangle", "nat", "filter", "security"}
)

// orderHits orders matched rules as a packet meets them: built-in chains
// in hook order, and after a jump, the matched rules of the chain jumped to.
func orderHits(hits []Hit) []RuleHit {
	byChain := map[string][]Hit{}
	var chainOrder []string
	for _, h := range hits {
		k := h.Table + " " + h.Chain
		if byChain[k] == nil {
			chainOrder = append(chainOrder, k)
		}
		byChain[k] = append(byChain[k], h)
	}
	for _, hs := range byChain { // the policy (index 0) applies last
		slices.SortStableFunc(hs, func(a, b Hit) int { return policyLast(a.Index) - policyLast(b.Index) })
	}
	var out []RuleHit
	done := map[string]bool{}
	var emit func(key string, depth int)
	emit = func(key string, depth int) {
		if done[key] {
			return
		}
		done[key] = true
		for _, h := range byChain[key] {
			out = append(out, RuleHit{Table: h.Table, Chain: h.Chain, Index: h.Index, Spec: ruleText(h.SavedRule), Packets: h.Delta, Depth: depth})
			if t := jumpTarget(h.Spec); t != "" && h.Index > 0 {
				if next := h.Table + " " + t; byChain[next] != nil {
					emit(next, depth+1)
				}
			}
		}
	}
	for _, hook := range hooks {
		for _, t := range tables {
			emit(t+" "+hook, 0)
		}
	}
	for _, k := range chainOrder { // matched, but reached from no matched jump
		emit(k, 0)
	}
	return out
}

func policyLast(index int) int {
	if index == 0 {
		return 1 << 30
	}
	return index
}

func ruleText(r SavedRule) string {
	if r.Index == 0 {
		return "policy " + r.Policy
	}
	return r.Spec
}

// serviceChainPrefixes name the per-Service chains of kube-proxy's
// iptables mode (pkg/proxy/iptables/proxier.go).
var serviceChainPrefixes = []string{"KUBE-SVC-", "KUBE-EXT-", "KUBE-FW-", "KUBE-SVL-"}

// summarize collects the Result's Summary from its hops.
func summarize(hops []Hop) Summary {
	var s Summary
	for i, h := range hops {
		for _, r := range h.Rules {
			if r.Table != "nat" {
				continue
			}
			for _, p := range serviceChainPrefixes {
				if strings.HasPrefix(r.Chain, p) && !slices.Contains(s.ServiceChains, r.Chain) {
					s.ServiceChains = append(s.ServiceChains, r.Chain)
				}
			}
			if strings.HasPrefix(r.Chain, "KUBE-SEP-") && !slices.Contains(s.EndpointChains, r.Chain) {
				s.EndpointChains = append(s.EndpointChains, r.Chain)
			}
		}
		if h.DNAT != nil && !s.Endpoint.IsValid() {
			s.Endpoint = h.DNAT.To
			if strings.HasPrefix(h.DNAT.By, "KUBE-SEP-") {
				s.ConfirmedSEP = h.DNAT.By
			}
		}
		if h.RealServer != "" && s.RealServer == "" {
			s.RealServer = h.RealServer
		}
		if h.SNAT != nil && !s.Masquerade.IsValid() {
			s.Masquerade, s.MasqueradeOn = h.SNAT.To.Addr(), h.Host
		}
		if h.Route != nil && h.Route.VXLAN != nil {
			s.VXLAN = append(s.VXLAN, VXLANSummary{From: h.Host, To: h.Route.Next, VXLANHop: *h.Route.VXLAN})
		}
		if h.Local && i == len(hops)-1 {
			s.Reached = h.Host
		}
	}
	return s
}
