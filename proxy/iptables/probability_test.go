package iptables

import "testing"

func TestComputeProbability(t *testing.T) {
	// Upstream's TestComputeProbability: the strings must stay distinct
	// and in upstream's format.
	var p probabilities
	for n, want := range map[int]string{1: "1.0000000000", 2: "0.5000000000", 3: "0.3333333333", 10: "0.1000000000"} {
		if got := p.of(n); got != want {
			t.Errorf("probability(%d) = %s, want %s", n, got, want)
		}
	}
	seen := map[string]bool{}
	for n := 1; n <= 100000; n++ {
		s := p.of(n)
		if seen[s] {
			t.Fatalf("probability(%d) = %s repeats an earlier one", n, s)
		}
		seen[s] = true
	}
}
