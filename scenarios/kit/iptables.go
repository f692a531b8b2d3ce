package kit

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"

	"github.com/svclab/svclab/internal/iptsave"
)

// Rule is one `-A` line of iptables-save -c.
type Rule struct {
	Packets, Bytes int64
	Chain          string
	Spec           string // the rule after "-A CHAIN "
}

// Rules returns the rules of chain, in order, from iptables-save output (with
// or without counters). It reads line by line (iptsave.ParseLine) and skips
// what is not a well-formed -A line.
func Rules(save, chain string) []Rule {
	var out []Rule
	for _, l := range appendLines(save) {
		if l.Chain == chain {
			out = append(out, Rule{Packets: int64(l.Counters.Packets), Bytes: int64(l.Counters.Bytes), Chain: chain, Spec: l.Spec})
		}
	}
	return out
}

// Lines returns the `-A` lines of iptables-save output without counters.
func Lines(save string) []string {
	var out []string
	for _, l := range appendLines(save) {
		out = append(out, iptsave.Rule{Chain: l.Chain, Spec: l.Spec}.String())
	}
	return out
}

// appendLines are the well-formed `-A CHAIN …` lines of save, in order.
func appendLines(save string) []iptsave.Line {
	var out []iptsave.Line
	for _, raw := range strings.Split(save, "\n") {
		if l, err := iptsave.ParseLine(raw); err == nil && l.Kind == iptsave.Command && l.Op == "-A" && l.Chain != "" {
			out = append(out, l)
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
