package iptables

import "fmt"

// probabilities caches the strings of 1/n in upstream's "%0.10f" format
// ("0.3333333333"), which are expensive to format and always the same.
// Upstream: Proxier.probability and computeProbability.
type probabilities struct{ cache []string }

func (p *probabilities) of(n int) string {
	for len(p.cache) <= n {
		p.cache = append(p.cache, computeProbability(len(p.cache)))
	}
	return p.cache[n]
}

func computeProbability(n int) string {
	if n == 0 {
		return "<bad value>"
	}
	return fmt.Sprintf("%0.10f", 1.0/float64(n))
}
