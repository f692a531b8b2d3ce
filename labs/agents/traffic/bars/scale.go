package bars

import (
	"math"
	"strings"
	"unicode"

	"github.com/svclab/svclab/labs/agents/traffic"
)

// Scale is the share the full length of a bar stands for: the smallest
// multiple of 10% that is at least every observed and expected share of
// the report (10% when all are 0).
func Scale(r traffic.Report) float64 {
	top := 0.0
	for _, be := range r.Backends {
		top = max(top, be.Share, be.Expected)
	}
	tenths := math.Ceil(top*10 - 1e-9)
	return math.Min(1, math.Max(1, tenths)/10)
}

// fraction is share over scale, clamped to [0, 1].
func fraction(share, scale float64) float64 {
	if !(share > 0) || !(scale > 0) {
		return 0
	}
	return math.Min(1, share/scale)
}

// printable replaces control and other non-printing characters of a
// backend's name (it is what a server answered) so that it can neither
// move a terminal's cursor nor break a layout.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
}

// unexpected reports whether a backend answered without being expected.
func unexpected(be traffic.BackendShare) bool { return be.Expected == 0 && be.Count > 0 }
