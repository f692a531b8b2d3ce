package bars

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/svclab/svclab/labs/agents/traffic"
)

// TextWidth is how many terminal cells the full Scale takes.
const TextWidth = 40

// eighths are the blocks of 0/8 … 8/8 of a cell, left to right.
var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"}

// ANSI styles of the text bars.
const (
	styleObserved   = "32"   // green
	styleUnexpected = "31"   // red: a backend that was not expected
	styleExpected   = "2"    // dim
	stylePass       = "1;32" // bold green
	styleFail       = "1;31" // bold red
)

// WriteText draws the report for a terminal: its head lines, then per
// backend a solid bar of its observed share (count beside it) and under it
// a shaded bar of its expected share, a line with the scale's ends, and the
// summary lines (chi-square, p-value, verdict). color adds ANSI colours: the
// caller decides (a terminal, NO_COLOR unset). For example:
//
//	10.96.0.11:80: 300 connections, 300 succeeded, 0 failed in 212ms
//	web-1  ██████████████████████████▌               34.3%  103
//	       ░░░░░░░░░░░░░░░░░░░░░░░░░                 33.3%  expected
//	…
//	       0%                                   40%
//	chi-square 0.26 on 2 degrees of freedom: p-value 0.8781 (uniform over the observed backends)
//	PASS at alpha 1e-06
func WriteText(w io.Writer, r traffic.Report, color bool) error {
	style := func(code, s string) string {
		if !color || s == "" {
			return s
		}
		return "\033[" + code + "m" + s + "\033[0m"
	}
	var b strings.Builder
	for _, line := range r.HeadLines() {
		b.WriteString(printable(line) + "\n")
	}
	if len(r.Backends) > 0 {
		writeTextBars(&b, r, style)
	}
	for _, line := range r.SummaryLines() {
		line = printable(line) // it names backends
		if strings.HasPrefix(line, "PASS") {
			line = style(stylePass, line)
		} else if strings.HasPrefix(line, "FAIL") {
			line = style(styleFail, line)
		}
		b.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTextBars writes two lines per backend and the scale line.
func writeTextBars(b *strings.Builder, r traffic.Report, style func(code, s string) string) {
	scale := Scale(r)
	nameWidth := 0
	for _, be := range r.Backends {
		nameWidth = max(nameWidth, utf8.RuneCountInString(shortName(be.Backend)))
	}
	indent := strings.Repeat(" ", nameWidth+2)
	for _, be := range r.Backends {
		name := shortName(be.Backend)
		observedStyle := styleObserved
		if unexpected(be) {
			observedStyle = styleUnexpected
		}
		bar, cells := solidBar(fraction(be.Share, scale))
		fmt.Fprintf(b, "%s%s%s%s  %6s  %d\n", name, strings.Repeat(" ", nameWidth-utf8.RuneCountInString(name)+2),
			style(observedStyle, bar), strings.Repeat(" ", TextWidth-cells), traffic.Percent(be.Share), be.Count)
		shade, cells := shadedBar(fraction(be.Expected, scale))
		note := "expected"
		if unexpected(be) {
			note = "not expected"
		}
		fmt.Fprintf(b, "%s%s%s  %6s  %s\n", indent, style(styleExpected, shade), strings.Repeat(" ", TextWidth-cells),
			traffic.Percent(be.Expected), note)
	}
	end := fmt.Sprintf("%.0f%%", 100*scale)
	fmt.Fprintf(b, "%s0%%%s%s\n", indent, strings.Repeat(" ", TextWidth-2-len(end)), end)
}

// solidBar is f of TextWidth cells in blocks, to an eighth of a cell, and
// how many cells it takes.
func solidBar(f float64) (string, int) {
	n := int(math.Round(f * TextWidth * 8))
	bar := strings.Repeat(eighths[8], n/8) + eighths[n%8]
	return bar, utf8.RuneCountInString(bar)
}

// shadedBar is f of TextWidth cells in light shade, to the nearest cell
// (at least one when f is not 0, so an expected share never vanishes).
func shadedBar(f float64) (string, int) {
	n := int(math.Round(f * TextWidth))
	if f > 0 && n == 0 {
		n = 1
	}
	return strings.Repeat("░", n), n
}
