package report

import (
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
)

// Summarize turns connect times into a Latency's statistics: p50 and p99
// are gonum's empirical quantiles (stat.Quantile with stat.Empirical: the
// smallest sample at or above the fraction), so with 200 connections the
// p99 is the second largest. failures counts the connections that did not
// succeed. samples is not modified.
func Summarize(samples []time.Duration, failures int) Latency {
	l := Latency{N: len(samples), Failures: failures}
	if len(samples) == 0 {
		return l
	}
	ms := make([]float64, len(samples))
	for i, d := range samples {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	slices.Sort(ms)
	l.P50Ms = stat.Quantile(0.50, stat.Empirical, ms, nil)
	l.P99Ms = stat.Quantile(0.99, stat.Empirical, ms, nil)
	l.MaxMs = ms[len(ms)-1]
	return l
}
