package kit

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/svclab/svclab/labs/agents/conntrack"
	corev1 "k8s.io/api/core/v1"
)

// ParseConntrackList reads `conntrack -L` as conntrack-tools prints it
// (one entry a line: protocol name and number, seconds left, the TCP
// state, the original tuple's src= dst= sport= dport=, [UNREPLIED], the
// reply tuple's, [ASSURED], mark=, use=; the summary line on stderr) into
// flows: how the IPv6 entries of a node are read (`conntrack -L -f
// ipv6`), where svclab's netlink dump reads IPv4 only. The text has no
// NAT status bits: they are derived as the kernel sets them, from the
// tuples — SNAT when the reply goes to another address or port than the
// original came from, DNAT when it comes from another than the original
// went to (nf_nat_setup_info marks only a tuple it changed).
func ParseConntrackList(text string) ([]conntrack.Flow, error) {
	var flows []conntrack.Flow
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "conntrack v") {
			continue
		}
		f, err := parseConntrackLine(line)
		if err != nil {
			return nil, fmt.Errorf("conntrack -L line %d %q: %w", i+1, line, err)
		}
		flows = append(flows, f)
	}
	return flows, nil
}

// parseConntrackLine reads one entry of ParseConntrackList.
func parseConntrackLine(line string) (conntrack.Flow, error) {
	words := strings.Fields(line)
	if len(words) < 3 {
		return conntrack.Flow{}, fmt.Errorf("too few fields")
	}
	var f conntrack.Flow
	proto, err := strconv.ParseUint(words[1], 10, 8)
	if err != nil {
		return f, fmt.Errorf("protocol number: %w", err)
	}
	timeout, err := strconv.ParseUint(words[2], 10, 32)
	if err != nil {
		return f, fmt.Errorf("timeout: %w", err)
	}
	f.Proto, f.Timeout = uint8(proto), uint32(timeout)
	var tuples []map[string]string
	replied := true
	for _, w := range words[3:] {
		key, value, ok := strings.Cut(w, "=")
		switch {
		case w == "[UNREPLIED]":
			replied = false
		case w == "[ASSURED]":
			f.Status |= conntrack.StatusAssured
		case !ok:
			f.TCPState = tcpStateNumber(w)
		case key == "src":
			tuples = append(tuples, map[string]string{})
			fallthrough
		case key == "dst" || key == "sport" || key == "dport":
			if len(tuples) == 0 {
				return f, fmt.Errorf("%s before src=", w)
			}
			tuples[len(tuples)-1][key] = value
		case key == "mark":
			mark, err := strconv.ParseUint(value, 10, 32)
			if err != nil {
				return f, fmt.Errorf("mark: %w", err)
			}
			f.Mark = uint32(mark)
		}
	}
	if len(tuples) != 2 {
		return f, fmt.Errorf("%d tuples, want the original and the reply", len(tuples))
	}
	if f.Orig, err = conntrackTuple(tuples[0]); err != nil {
		return f, err
	}
	if f.Reply, err = conntrackTuple(tuples[1]); err != nil {
		return f, err
	}
	f.Status |= conntrack.StatusConfirmed
	if replied {
		f.Status |= conntrack.StatusSeenReply
	}
	if f.Reply.Dst != f.Orig.Src {
		f.Status |= conntrack.StatusSrcNAT | conntrack.StatusSrcNATDone
	}
	if f.Reply.Src != f.Orig.Dst {
		f.Status |= conntrack.StatusDstNAT | conntrack.StatusDstNATDone
	}
	return f, nil
}

// conntrackTuple is one direction's src=, dst=, sport=, dport= (ports 0
// for a protocol without them).
func conntrackTuple(t map[string]string) (conntrack.Tuple, error) {
	src, err := netip.ParseAddr(t["src"])
	if err != nil {
		return conntrack.Tuple{}, fmt.Errorf("src: %w", err)
	}
	dst, err := netip.ParseAddr(t["dst"])
	if err != nil {
		return conntrack.Tuple{}, fmt.Errorf("dst: %w", err)
	}
	port := func(key string) uint16 {
		p, _ := strconv.ParseUint(t[key], 10, 16)
		return uint16(p)
	}
	return conntrack.Tuple{Src: netip.AddrPortFrom(src, port("sport")), Dst: netip.AddrPortFrom(dst, port("dport"))}, nil
}

// tcpStateNumber is the number of a TCP state conntrack prints (the
// order of conntrack.Flow.TCPStateName); 0 for a word that is none.
func tcpStateNumber(name string) uint8 {
	for n := uint8(1); n < 10; n++ {
		if (conntrack.Flow{TCPState: n}).TCPStateName() == name {
			return n
		}
	}
	return 0
}

// FlowsOfFamily are the flows whose original source is of family ("" is
// IPv4).
func FlowsOfFamily(flows []conntrack.Flow, family corev1.IPFamily) []conntrack.Flow {
	var out []conntrack.Flow
	for _, f := range flows {
		if FamilyOf(f.Orig.Src.Addr()) == familyOrIPv4(family) {
			out = append(out, f)
		}
	}
	return out
}
