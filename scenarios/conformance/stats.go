package conformance

import "github.com/svclab/svclab/scenarios/kit"

// The suite's statistics are kit's, shared with the lab scenarios: one
// alpha for every distribution assertion of `make test`, and the
// Bonferroni arithmetic next to it (kit.Alpha).
const (
	alpha = kit.Alpha
	miss  = kit.Miss
)

var (
	sampleSize    = kit.SampleSize
	expectUniform = kit.ExpectUniform
	expectShares  = kit.ExpectShares
)
