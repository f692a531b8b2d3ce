package kit

import (
	"bufio"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
)

// Rule is one `-A` line of iptables-save -c.
type Rule struct {
	Packets, Bytes int64
	Chain          string
	Spec           string // the rule after "-A CHAIN "
}

// Rules returns the rules of chain, in order, from iptables-save output (with
// or without counters).
func Rules(save, chain string) []Rule {
	var out []Rule
	sc := bufio.NewScanner(strings.NewReader(save))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		var r Rule
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			fmt.Sscanf(line[1:end], "%d:%d", &r.Packets, &r.Bytes)
			line = strings.TrimSpace(line[end+1:])
		}
		if !strings.HasPrefix(line, "-A "+chain+" ") {
			continue
		}
		r.Chain = chain
		r.Spec = strings.TrimPrefix(line, "-A "+chain+" ")
		out = append(out, r)
	}
	return out
}

// Lines returns the `-A` lines of iptables-save output without counters.
func Lines(save string) []string {
	var out []string
	for _, line := range strings.Split(save, "\n") {
		if strings.HasPrefix(line, "[") {
			if end := strings.IndexByte(line, ']'); end >= 0 {
				line = strings.TrimSpace(line[end+1:])
			}
		}
		if strings.HasPrefix(line, "-A ") {
			out = append(out, line)
		}
	}
	return out
}

// UpstreamChain computes a chain name the way upstream kube-proxy does
// (pkg/proxy/iptables servicePortChainName / servicePortEndpointChainName):
// prefix + the first 16 characters of base32(sha256(parts joined)). It is
// written here again, independently of svclab's renderer, so the scenarios
// check the renderer against upstream's rule and not against itself.
func UpstreamChain(prefix string, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "")))
	return prefix + base32.StdEncoding.EncodeToString(sum[:])[:16]
}

// Delta returns after − before per rule position (the chains must have the
// same rules).
func Delta(before, after []Rule) ([]int64, error) {
	if len(before) != len(after) {
		return nil, fmt.Errorf("chain changed between readings: %d rules, then %d", len(before), len(after))
	}
	out := make([]int64, len(after))
	for i := range after {
		if before[i].Spec != after[i].Spec {
			return nil, fmt.Errorf("rule %d changed between readings: %q, then %q", i, before[i].Spec, after[i].Spec)
		}
		out[i] = after[i].Packets - before[i].Packets
	}
	return out, nil
}
