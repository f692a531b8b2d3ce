package ui

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// chainOrder sorts the nat table's KUBE chains in the order a packet meets
// them: the entry chains, then per Service its firewall, external, service
// and endpoint chains, then the masquerade chains.
var chainOrder = []string{"KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-FW-", "KUBE-EXT-", "KUBE-SVC-", "KUBE-SVL-", "KUBE-SEP-", "KUBE-MARK-MASQ", "KUBE-POSTROUTING"}

// maxSaveLines bounds how much of iptables-save's output is read.
const maxSaveLines = 100_000

// ParseNATCounters reads `iptables-save -c -t nat` and returns its KUBE
// chains (every chain whose name starts with KUBE-), each with its rules and
// their packet and byte counters, in chainOrder (by name within a kind).
// Other chains, and the built-in chains' own rules, are left out.
func ParseNATCounters(save string) ([]Chain, error) {
	chains := map[string]*Chain{}
	var names []string
	inNAT := false
	sc := bufio.NewScanner(strings.NewReader(save))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		if n > maxSaveLines {
			return nil, fmt.Errorf("iptables-save: more than %d lines", maxSaveLines)
		}
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "*"):
			inNAT = line == "*nat"
		case !inNAT || line == "" || strings.HasPrefix(line, "#") || line == "COMMIT":
		case strings.HasPrefix(line, ":"):
			name, _, _ := strings.Cut(line[1:], " ")
			if isKubeChain(name) && chains[name] == nil {
				chains[name] = &Chain{Name: name, Rules: []Rule{}}
				names = append(names, name)
			}
		case strings.HasPrefix(line, "["):
			rule, chain, err := parseCountedRule(line)
			if err != nil {
				return nil, fmt.Errorf("iptables-save line %d: %w", n, err)
			}
			if c := chains[chain]; c != nil {
				c.Rules = append(c.Rules, rule)
			}
		default:
			return nil, fmt.Errorf("iptables-save line %d: %q: want a chain, a rule with counters, or COMMIT", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("iptables-save: %w", err)
	}
	slices.SortStableFunc(names, func(a, b string) int {
		if d := chainRank(a) - chainRank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	out := make([]Chain, 0, len(names))
	for _, name := range names {
		out = append(out, *chains[name])
	}
	return out, nil
}

func isKubeChain(name string) bool { return strings.HasPrefix(name, "KUBE-") }

// chainRank is a chain's place in chainOrder (after them all if none).
func chainRank(name string) int {
	for i, p := range chainOrder {
		if name == p || (strings.HasSuffix(p, "-") && strings.HasPrefix(name, p)) {
			return i
		}
	}
	return len(chainOrder)
}

// parseCountedRule reads "[PKTS:BYTES] -A CHAIN SPEC…".
func parseCountedRule(line string) (Rule, string, error) {
	counters, rest, ok := strings.Cut(line, "] ")
	pkts, bytes, ok2 := strings.Cut(strings.TrimPrefix(counters, "["), ":")
	if !ok || !ok2 {
		return Rule{}, "", fmt.Errorf("%q: want [PACKETS:BYTES] -A CHAIN …", line)
	}
	var r Rule
	var err error
	if r.Packets, err = strconv.ParseUint(pkts, 10, 64); err != nil {
		return Rule{}, "", fmt.Errorf("%q: packets: %w", line, err)
	}
	if r.Bytes, err = strconv.ParseUint(bytes, 10, 64); err != nil {
		return Rule{}, "", fmt.Errorf("%q: bytes: %w", line, err)
	}
	words := splitRule(rest)
	if len(words) < 2 || words[0] != "-A" {
		return Rule{}, "", fmt.Errorf("%q: want -A CHAIN after the counters", line)
	}
	chain := words[1]
	var spec []string
	for i := 2; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-m" && i+1 < len(words) && words[i+1] == "comment":
			i++ // the comment module; its text follows
		case w == "--comment" && i+1 < len(words):
			i++
			r.Comment = unquote(words[i])
		case (w == "-j" || w == "-g") && i+1 < len(words):
			r.Target = words[i+1]
			spec = append(spec, w)
		default:
			spec = append(spec, w)
		}
	}
	r.Spec = strings.Join(spec, " ")
	return r, chain, nil
}

// splitRule splits a rule into words, keeping a double-quoted word (with
// its quotes and \" escapes) whole, as iptables-save quotes comments.
func splitRule(s string) []string {
	var words []string
	var cur strings.Builder
	quoted, escaped := false, false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
			cur.WriteRune(r)
		case r == '\\' && quoted:
			escaped = true
			cur.WriteRune(r)
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}

// unquote removes iptables-save's quotes around a comment.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `\"`, `"`)
	}
	return s
}
