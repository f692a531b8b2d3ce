package traffic

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultAlpha is the significance level of the split's chi-square test
// when none is given: a correct proxy fails `svclab traffic` at most once
// in 10^6 runs, the bound every statistical test of the project keeps.
// The price is power: with few connections only a gross skew is caught
// (UniformitySampleSize says how many connections a given skew needs).
const DefaultAlpha = 1e-6

// maxExpected bounds the number of expected backends.
const maxExpected = 10_000

// ParseExpected reads Options.Expected: each entry NAME (weight 1) or
// NAME=WEIGHT with WEIGHT a positive number, names unique. It returns the
// names in their order and the expected share of each (weights over their
// sum).
func ParseExpected(entries []string) (names []string, shares map[string]float64, err error) {
	if len(entries) > maxExpected {
		return nil, nil, fmt.Errorf("traffic: %d expected backends: at most %d", len(entries), maxExpected)
	}
	weights := map[string]float64{}
	var sum float64
	for _, e := range entries {
		name, w, hasWeight := strings.Cut(e, "=")
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, nil, fmt.Errorf("traffic: expected backend %q: want NAME or NAME=WEIGHT", e)
		}
		if _, dup := weights[name]; dup {
			return nil, nil, fmt.Errorf("traffic: expected backend %q given twice", name)
		}
		weight := 1.0
		if hasWeight {
			weight, err = strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil || !(weight > 0) || math.IsInf(weight, 0) {
				return nil, nil, fmt.Errorf("traffic: expected backend %q: weight %q: want a positive number", name, w)
			}
		}
		weights[name] = weight
		names = append(names, name)
		sum += weight
	}
	if math.IsInf(sum, 0) {
		return nil, nil, fmt.Errorf("traffic: expected weights %v: their sum is too large", entries)
	}
	shares = map[string]float64{}
	for name, w := range weights {
		shares[name] = w / sum
	}
	return names, shares, nil
}
