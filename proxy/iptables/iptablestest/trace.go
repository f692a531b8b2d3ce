package iptablestest

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/svclab/svclab/proxy/iptables/chains"
)

// Packet is the first packet of a connection, as the tracer sees it.
type Packet struct {
	Source      netip.Addr
	Destination netip.Addr
	// Protocol is "tcp", "udp" or "sctp"; "" means tcp.
	Protocol        string
	DestinationPort int
	// DestinationLocal marks the destination as an address of this node
	// (matched by "-m addrtype --dst-type LOCAL") even when it is not one of
	// the tracer's NodeIPs.
	DestinationLocal bool
	// InInterface is the interface it arrived on, for "-i" matches; ""
	// matches no interface.
	InInterface string
}

func (p Packet) String() string {
	proto := p.Protocol
	if proto == "" {
		proto = "tcp"
	}
	return fmt.Sprintf("%s %s -> %s:%d", proto, p.Source, p.Destination, p.DestinationPort)
}

// Tracer follows packets through the rules of a Dump.
//
// It runs, like upstream's tracer, the nat table's PREROUTING (or, when
// nothing jumps from it, KUBE-SERVICES directly), then on the possibly
// DNATed packet the filter chains KUBE-SERVICES, KUBE-EXTERNAL-SERVICES,
// KUBE-NODEPORTS and KUBE-PROXY-FIREWALL until one gives a verdict, and
// finally nat POSTROUTING (or KUBE-POSTROUTING), where the masquerade mark
// set by KUBE-MARK-MASQ turns into MASQUERADE. Unlike upstream's, it keeps
// the fwmark and follows each branch of a "-m statistic" rule separately,
// so every path has its own destination and masquerade decision.
//
// Every packet is treated as the first of a new connection: conntrack
// state is NEW (plus DNAT once translated) and "-m recent --rcheck" never
// matches.
type Tracer struct {
	Dump *Dump
	// NodeIPs are this node's addresses, which "-m addrtype --src-type
	// LOCAL" and "--dst-type LOCAL" match; loopback addresses always do.
	NodeIPs []netip.Addr
}

// Path is one way a packet can go.
type Path struct {
	// Destination is "IP:port" after DNAT, "" when it was not translated.
	Destination string
	// Verdict is "ACCEPT" (also when nothing decided), "DROP" or "REJECT".
	Verdict string
	// Masqueraded is true when POSTROUTING masquerades it.
	Masqueraded bool
	// Rules are the rules that matched, in order.
	Rules []string
}

// Result lists every path a packet can take.
type Result struct {
	Packet Packet
	Paths  []Path
}

// Destinations are the DNAT destinations of the accepted paths, sorted and
// unique.
func (r Result) Destinations() []string {
	var out []string
	for _, p := range r.Paths {
		if p.Verdict == "ACCEPT" && p.Destination != "" && !slices.Contains(out, p.Destination) {
			out = append(out, p.Destination)
		}
	}
	slices.Sort(out)
	return out
}

// AllMasqueraded reports whether every accepted path is masqueraded (and
// there is at least one).
func (r Result) AllMasqueraded() bool {
	n := 0
	for _, p := range r.Paths {
		if p.Verdict != "ACCEPT" {
			continue
		}
		if !p.Masqueraded {
			return false
		}
		n++
	}
	return n > 0
}

// AnyMasqueraded reports whether some accepted path is masqueraded.
func (r Result) AnyMasqueraded() bool {
	for _, p := range r.Paths {
		if p.Verdict == "ACCEPT" && p.Masqueraded {
			return true
		}
	}
	return false
}

// MasqueradedTo reports whether the paths to destination are masqueraded.
func (r Result) MasqueradedTo(destination string) bool {
	found := false
	for _, p := range r.Paths {
		if p.Destination == destination && p.Verdict == "ACCEPT" {
			if !p.Masqueraded {
				return false
			}
			found = true
		}
	}
	return found
}

// Rejected reports whether some path ends in REJECT.
func (r Result) Rejected() bool { return r.hasVerdict("REJECT") }

// Dropped reports whether some path ends in DROP.
func (r Result) Dropped() bool { return r.hasVerdict("DROP") }

func (r Result) hasVerdict(v string) bool {
	for _, p := range r.Paths {
		if p.Verdict == v {
			return true
		}
	}
	return false
}

// String describes the result, with the matched rules, for test failures.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", r.Packet)
	for i, p := range r.Paths {
		dest := p.Destination
		if dest == "" {
			dest = "(no DNAT)"
		}
		fmt.Fprintf(&b, "  path %d: %s %s masquerade=%v\n", i, p.Verdict, dest, p.Masqueraded)
		for _, rule := range p.Rules {
			fmt.Fprintf(&b, "    %s\n", rule)
		}
	}
	return b.String()
}

// state is one path in flight.
type state struct {
	dst      netip.Addr
	dport    int
	mark     uint64
	dnat     bool
	masq     bool
	verdict  string // set when a terminal target was hit
	returned bool   // RETURN: leave the current chain
	rules    []string
}

func (s state) with(rule string) state {
	s.rules = append(slices.Clip(s.rules), rule)
	return s
}

const maxJumpDepth = 64

// Trace follows p through the rules and returns every path it can take.
func (t *Tracer) Trace(p Packet) Result {
	if p.Protocol == "" {
		p.Protocol = "tcp"
	}
	start := state{dst: p.Destination, dport: p.DestinationPort}

	// nat PREROUTING: the DNAT decision.
	states := t.runHook(p, "nat", "PREROUTING", chains.Services, []state{start})
	for i := range states {
		states[i].verdict = "" // DNAT or ACCEPT ends the nat hook only
	}

	// filter: the first verdict of kube-proxy's chains wins.
	for _, chain := range []string{chains.Services, chains.ExternalServices, chains.NodePorts, chains.ProxyFirewall} {
		var next []state
		for _, st := range states {
			if st.verdict != "" {
				next = append(next, st)
				continue
			}
			next = append(next, t.run(p, "filter", chain, []state{st}, 0)...)
		}
		states = next
	}

	// nat POSTROUTING: masquerade marked packets.
	var final []state
	for _, st := range states {
		if st.verdict == "DROP" || st.verdict == "REJECT" {
			final = append(final, st)
			continue
		}
		st.verdict = ""
		for _, out := range t.runHook(p, "nat", "POSTROUTING", chains.Postrouting, []state{st}) {
			out.verdict = ""
			final = append(final, out)
		}
	}

	res := Result{Packet: p}
	for _, st := range final {
		path := Path{Verdict: st.verdict, Masqueraded: st.masq, Rules: st.rules}
		if path.Verdict == "" {
			path.Verdict = "ACCEPT"
		}
		if st.dnat {
			path.Destination = netip.AddrPortFrom(st.dst, uint16(st.dport)).String()
		}
		res.Paths = append(res.Paths, path)
	}
	return res
}

// runHook runs a built-in chain, or fallback when the built-in chain has no
// rules (a dump made from a payload alone has no jump rules).
func (t *Tracer) runHook(p Packet, table, builtin, fallback string, in []state) []state {
	if c := t.Dump.Chain(table, builtin); c != nil && len(c.Rules) > 0 {
		return t.run(p, table, builtin, in, 0)
	}
	return t.run(p, table, fallback, in, 0)
}

// run passes states through chain. Returned states either carry a verdict
// or continue after the rule that called the chain.
func (t *Tracer) run(p Packet, table, chain string, in []state, depth int) []state {
	c := t.Dump.Chain(table, chain)
	if c == nil {
		return in
	}
	if depth > maxJumpDepth {
		panic(fmt.Sprintf("iptablestest: jumps nested deeper than %d at %s/%s: a loop?", maxJumpDepth, table, chain))
	}
	active := in
	var done []state
	for _, r := range c.Rules {
		var next []state
		for _, st := range active {
			m := t.matches(p, r, st)
			if m == noMatch {
				next = append(next, st)
				continue
			}
			if m == maybeMatch {
				next = append(next, st) // the branch where it did not match
			}
			for _, out := range t.apply(p, table, r, st.with(r.String()), depth) {
				if out.verdict != "" || out.returned {
					done = append(done, out)
				} else {
					next = append(next, out)
				}
			}
		}
		active = next
	}
	out := append(done, active...)
	for i := range out {
		out[i].returned = false
	}
	return out
}

// apply carries out a matched rule's target.
func (t *Tracer) apply(p Packet, table string, r *Rule, st state, depth int) []state {
	switch r.Jump {
	case "":
		// No target: the rule only counts packets.
	case "ACCEPT", "DROP", "REJECT":
		st.verdict = r.Jump
	case "RETURN":
		st.returned = true
	case "DNAT":
		ap, err := netip.ParseAddrPort(r.ToDestination)
		if err != nil {
			panic(fmt.Sprintf("iptablestest: DNAT target %q in %q: %v", r.ToDestination, r.String(), err))
		}
		st.dst, st.dport, st.dnat = ap.Addr(), int(ap.Port()), true
		st.verdict = "DNAT"
	case "MASQUERADE", "SNAT":
		st.masq = true
		st.verdict = "ACCEPT"
	case "MARK":
		switch {
		case r.OrMark != "":
			st.mark |= parseMark(r.OrMark)
		case r.XorMark != "":
			st.mark ^= parseMark(r.XorMark)
		case r.SetXMark != "":
			v, m := parseMarkMask(r.SetXMark)
			st.mark = (st.mark &^ m) ^ v
		}
	case "LOG", "CONNMARK":
		// Non-terminating and irrelevant here.
	default:
		return t.run(p, table, r.Jump, []state{st}, depth+1)
	}
	return []state{st}
}

type match int

const (
	noMatch match = iota
	yesMatch
	maybeMatch
)

// matches evaluates a rule's matches against a packet in state st.
func (t *Tracer) matches(p Packet, r *Rule, st state) match {
	checks := []struct {
		v  *Value
		ok func(string) bool
	}{
		{r.Protocol, func(v string) bool { return v == p.Protocol }},
		{r.Source, func(v string) bool { return addressIn(p.Source, v) }},
		{r.Destination, func(v string) bool { return addressIn(st.dst, v) }},
		{r.InInterface, func(v string) bool { return interfaceMatches(p.InInterface, v) }},
		{r.OutInterface, func(string) bool { return false }},
		{r.SourceType, func(v string) bool { return v == "LOCAL" && t.isLocal(p, p.Source) }},
		{r.DestinationType, func(v string) bool { return v == "LOCAL" && t.isLocal(p, st.dst) }},
		{r.SourcePort, func(string) bool { return false }},
		{r.DestinationPort, func(v string) bool { return portIn(st.dport, v) }},
		{r.Mark, func(v string) bool { val, mask := parseMarkMask(v); return st.mark&mask == val }},
		{r.CTState, func(v string) bool { return ctStateMatches(st, v) }},
	}
	for _, c := range checks {
		if c.v != nil && c.ok(c.v.Value) == c.v.Negated {
			return noMatch
		}
	}
	if r.RecentCheck {
		return noMatch // no connection history
	}
	if r.Probability != "" {
		switch prob, _ := strconv.ParseFloat(r.Probability, 64); {
		case prob >= 1:
			return yesMatch
		case prob <= 0:
			return noMatch
		}
		return maybeMatch
	}
	return yesMatch
}

func (t *Tracer) isLocal(p Packet, a netip.Addr) bool {
	if a.IsLoopback() || (p.DestinationLocal && a == p.Destination) {
		return true
	}
	return slices.Contains(t.NodeIPs, a)
}

func addressIn(a netip.Addr, v string) bool {
	if strings.Contains(v, "/") {
		prefix, err := netip.ParsePrefix(v)
		if err != nil {
			panic(fmt.Sprintf("iptablestest: bad CIDR %q: %v", v, err))
		}
		return prefix.Contains(a)
	}
	b, err := netip.ParseAddr(v)
	if err != nil {
		panic(fmt.Sprintf("iptablestest: bad address %q: %v", v, err))
	}
	return a == b
}

func interfaceMatches(iface, pattern string) bool {
	if iface == "" {
		return false
	}
	if strings.HasSuffix(pattern, "+") {
		return strings.HasPrefix(iface, strings.TrimSuffix(pattern, "+"))
	}
	return iface == pattern
}

func portIn(port int, v string) bool {
	lo, hi, isRange := strings.Cut(v, ":")
	a, _ := strconv.Atoi(lo)
	if !isRange {
		return port == a
	}
	b, _ := strconv.Atoi(hi)
	return port >= a && port <= b
}

func ctStateMatches(st state, v string) bool {
	for _, s := range strings.Split(v, ",") {
		if s == "NEW" || (s == "DNAT" && st.dnat) {
			return true
		}
	}
	return false
}

func parseMark(s string) uint64 {
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		panic(fmt.Sprintf("iptablestest: bad mark %q: %v", s, err))
	}
	return v
}

func parseMarkMask(s string) (value, mask uint64) {
	v, m, hasMask := strings.Cut(s, "/")
	if !hasMask {
		return parseMark(v), 0xffffffff
	}
	return parseMark(v), parseMark(m)
}
