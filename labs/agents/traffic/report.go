package traffic

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Report summarises a Result: how connections spread over the backends
// against how they were expected to, and the chi-square verdict.
type Report struct {
	Target    string `json:"target"`
	Requested int    `json:"requested"`
	Attempted int    `json:"attempted"`
	Succeeded int    `json:"succeeded"`
	Failed    int    `json:"failed"`
	// Failures counts failed connections per kind; kinds with none are left out.
	Failures map[FailureKind]int `json:"failures"`
	// Backends are sorted by name: the expected ones, then any unexpected.
	Backends []BackendShare `json:"backends"`
	// ExpectedFrom says what the expected shares are uniform over:
	// "expected" (the caller's set) or "observed" (the backends that answered).
	ExpectedFrom string `json:"expectedFrom"`
	// Missing are expected backends that got no connection.
	Missing []string `json:"missing,omitempty"`
	// Unexpected are backends that answered but were not expected.
	Unexpected []string `json:"unexpected,omitempty"`
	// ChiSquare is Pearson's statistic, DegreesOfFreedom its degrees of
	// freedom; ChiSquare is null when infinite (an unexpected backend) or
	// undefined (no success).
	ChiSquare        *float64 `json:"chiSquare"`
	DegreesOfFreedom int      `json:"degreesOfFreedom"`
	// PValue is the chi-square goodness-of-fit p-value (see
	// ChiSquarePValue); null when no connection succeeded.
	PValue           *float64      `json:"pValue"`
	Elapsed          time.Duration `json:"elapsedNanos"`
	DeadlineExceeded bool          `json:"deadlineExceeded"`
	// Alpha is the test's significance level; Verdict is VerdictPass or
	// VerdictFail, and VerdictReason says why it failed.
	Alpha         float64 `json:"alpha"`
	Verdict       string  `json:"verdict"`
	VerdictReason string  `json:"verdictReason,omitempty"`
}

// Verdicts of a Report.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
)

// Passed reports whether the verdict is a pass.
func (r Report) Passed() bool { return r.Verdict == VerdictPass }

// BackendShare is one backend's line in a Report.
type BackendShare struct {
	Backend string `json:"backend"`
	Count   int    `json:"count"`
	// Share is Count over the successful connections.
	Share float64 `json:"share"`
	// Expected is the share the expected split gives it: its weight over
	// the sum of weights, uniform when no weights are given (0 if unexpected).
	Expected float64 `json:"expected"`
}

// Report summarises r against r.Expected (Options.Expected): the weighted
// split over that set if given, else uniform over the backends that
// answered; and gives the verdict at r.Alpha (DefaultAlpha when 0): a
// fail when no connection succeeded, any failed or was not attempted, or
// the chi-square p-value is below alpha.
func (r *Result) Report() Report {
	rep := Report{
		Target: r.Target, Requested: r.Requested, Attempted: r.Attempted,
		Succeeded: r.Succeeded, Failed: r.Failed(),
		Failures: map[FailureKind]int{}, Backends: []BackendShare{},
		Elapsed: r.Elapsed, DeadlineExceeded: r.DeadlineExceeded,
	}
	for kind, n := range r.Failures {
		if n > 0 {
			rep.Failures[kind] = n
		}
	}

	expected, shareOf, err := ParseExpected(r.Expected)
	if err != nil {
		// A Result from Run has valid Expected; one decoded from elsewhere
		// may not: its entries are then taken as plain names.
		expected, shareOf = slices.Compact(slices.Sorted(slices.Values(r.Expected))), map[string]float64{}
		for _, name := range expected {
			shareOf[name] = 1 / float64(len(expected))
		}
	}
	slices.Sort(expected)
	rep.ExpectedFrom = "expected"
	if len(expected) == 0 {
		rep.ExpectedFrom = "observed"
		for name := range r.Backends {
			expected = append(expected, name)
		}
		slices.Sort(expected)
		for _, name := range expected {
			shareOf[name] = 1 / float64(len(expected))
		}
	}
	for _, name := range expected {
		if r.Backends[name] == 0 {
			rep.Missing = append(rep.Missing, name)
		}
	}
	for name := range r.Backends {
		if !slices.Contains(expected, name) {
			rep.Unexpected = append(rep.Unexpected, name)
		}
	}
	slices.Sort(rep.Unexpected)

	var counts, shares []float64
	add := func(name string, expectedShare float64) {
		n := r.Backends[name]
		share := 0.0
		if r.Succeeded > 0 {
			share = float64(n) / float64(r.Succeeded)
		}
		rep.Backends = append(rep.Backends, BackendShare{Backend: name, Count: n, Share: share, Expected: expectedShare})
		counts = append(counts, float64(n))
		shares = append(shares, expectedShare)
	}
	for _, name := range expected {
		add(name, shareOf[name])
	}
	for _, name := range rep.Unexpected {
		add(name, 0)
	}

	statistic, dof := ChiSquareStatistic(counts, shares)
	rep.DegreesOfFreedom = dof
	if !math.IsNaN(statistic) && !math.IsInf(statistic, 0) {
		rep.ChiSquare = &statistic
	}
	if p := ChiSquarePValue(counts, shares); !math.IsNaN(p) {
		rep.PValue = &p
	}
	rep.Alpha = r.Alpha
	if rep.Alpha == 0 {
		rep.Alpha = DefaultAlpha
	}
	rep.Verdict, rep.VerdictReason = rep.verdict()
	return rep
}

// verdict is the report's verdict at its Alpha, and why it fails.
func (r Report) verdict() (string, string) {
	switch {
	case r.Succeeded == 0 || r.PValue == nil:
		return VerdictFail, "no connection succeeded"
	case r.Failed > 0:
		return VerdictFail, fmt.Sprintf("%d of %d connections failed", r.Failed, r.Attempted)
	case r.DeadlineExceeded:
		return VerdictFail, fmt.Sprintf("the deadline stopped the run after %d of %d connections", r.Attempted, r.Requested)
	case *r.PValue < r.Alpha:
		return VerdictFail, fmt.Sprintf("p-value %s is below alpha %g: the connections are not split as expected", formatP(*r.PValue), r.Alpha)
	}
	return VerdictPass, ""
}
