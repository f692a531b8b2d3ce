package bars

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/svclab/svclab/labs/agents/traffic"
)

// The SVG picture's geometry, in pixels.
const (
	svgPad       = 24.0
	svgFont      = 16.0
	svgCharW     = 0.6 * svgFont  // DejaVu Sans' mean advance, roughly
	svgBoldCharW = 0.66 * svgFont // and its bold's, for the verdict line
	svgBarW      = 420.0
	svgBarH      = 26.0
	svgRowH      = 50.0
	svgValueW    = 190.0
	svgLineH     = 22.0
	maxName      = 40 // longer backend names are cut, with "…"
	svgMinNameW  = 80.0
	svgTitleFont = 20.0
)

// The SVG picture's colours.
const (
	colorObserved   = "#2b7bb9"
	colorUnexpected = "#c0392b"
	colorExpected   = "#222222"
	colorGrid       = "#d9d9d9"
	colorText       = "#222222"
	colorMuted      = "#555555"
	colorPass       = "#1e8449"
	colorFail       = "#c0392b"
)

// WriteSVG draws the report as a self-contained SVG picture: the target and
// the head lines, a legend, per backend a solid bar of its observed share
// and a dashed outline ending in a tick at its expected share, with the
// share, count and expected share written beside them, the scale's grid in
// steps of 10%, and the summary lines with the verdict in colour.
func WriteSVG(w io.Writer, r traffic.Report) error {
	scale := Scale(r)
	nameW := svgMinNameW
	for _, be := range r.Backends {
		nameW = max(nameW, float64(utf8.RuneCountInString(shortName(be.Backend)))*svgCharW)
	}
	barX := svgPad + nameW + 14
	width := barX + svgBarW + 14 + svgValueW + svgPad
	head := r.HeadLines()
	summary := r.SummaryLines()
	for _, line := range append(slices.Clip(head), summary...) {
		charW := svgCharW
		if line == r.VerdictLine() {
			charW = svgBoldCharW
		}
		width = max(width, 2*svgPad+float64(utf8.RuneCountInString(line))*charW)
	}
	rowsY := svgPad + svgTitleFont + float64(len(head))*svgLineH + 44
	axisY := rowsY + float64(len(r.Backends))*svgRowH
	height := axisY + 30 + float64(len(summary))*svgLineH + svgPad

	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %[1]s %[2]s" font-family="DejaVu Sans, Verdana, Arial, sans-serif" font-size="%s" fill="%s">`+"\n",
		num(width), num(height), num(svgFont), colorText)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc("traffic to "+r.Target))
	fmt.Fprintf(&b, `<rect width="%s" height="%s" fill="#ffffff"/>`+"\n", num(width), num(height))

	y := svgPad + svgTitleFont
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="%s" font-weight="bold">%s</text>`+"\n", num(svgPad), num(y), num(svgTitleFont), esc("Traffic to "+r.Target))
	for _, line := range head {
		y += svgLineH
		fmt.Fprintf(&b, `<text x="%s" y="%s" fill="%s">%s</text>`+"\n", num(svgPad), num(y), colorMuted, esc(line))
	}
	writeSVGLegend(&b, barX, y+30)
	if len(r.Backends) > 0 {
		writeSVGGrid(&b, scale, barX, rowsY-8, axisY)
	}
	for i, be := range r.Backends {
		writeSVGRow(&b, be, scale, barX, rowsY+float64(i)*svgRowH)
	}
	y = axisY + 30
	for _, line := range summary {
		y += svgLineH
		switch {
		case strings.HasPrefix(line, "PASS"):
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-weight="bold" fill="%s">%s</text>`+"\n", num(svgPad), num(y), colorPass, esc(line))
		case strings.HasPrefix(line, "FAIL"):
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-weight="bold" fill="%s">%s</text>`+"\n", num(svgPad), num(y), colorFail, esc(line))
		default:
			fmt.Fprintf(&b, `<text x="%s" y="%s">%s</text>`+"\n", num(svgPad), num(y), esc(line))
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSVGLegend says what the solid and the dashed bars are.
func writeSVGLegend(b *strings.Builder, x, y float64) {
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="28" height="14" fill="%s"/>`+"\n", num(x), num(y-12), colorObserved)
	fmt.Fprintf(b, `<text x="%s" y="%s">observed share</text>`+"\n", num(x+36), num(y))
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="28" height="14" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="5 3"/>`+"\n", num(x+190), num(y-12), colorExpected)
	fmt.Fprintf(b, `<text x="%s" y="%s">expected share</text>`+"\n", num(x+226), num(y))
}

// writeSVGGrid draws a vertical line and its label at every 10% of the
// scale, from top to axisY.
func writeSVGGrid(b *strings.Builder, scale, barX, top, axisY float64) {
	steps := int(scale*10 + 0.5)
	for i := 0; i <= steps; i++ {
		x := barX + svgBarW*float64(i)/float64(steps)
		fmt.Fprintf(b, `<line x1="%[1]s" y1="%[2]s" x2="%[1]s" y2="%[3]s" stroke="%[4]s" stroke-width="1"/>`+"\n", num(x), num(top), num(axisY), colorGrid)
		fmt.Fprintf(b, `<text x="%s" y="%s" font-size="13" text-anchor="middle" fill="%s">%d%%</text>`+"\n", num(x), num(axisY+18), colorMuted, 10*i)
	}
}

// writeSVGRow draws one backend: its name, the observed bar, the expected
// outline and tick, and the numbers.
func writeSVGRow(b *strings.Builder, be traffic.BackendShare, scale, barX, y float64) {
	fill := colorObserved
	if unexpected(be) {
		fill = colorUnexpected
	}
	mid := y + svgBarH/2 + svgFont*0.35
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" font-weight="bold">%s</text>`+"\n", num(barX-14), num(mid), esc(shortName(be.Backend)))
	if w := svgBarW * fraction(be.Share, scale); w > 0 {
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", num(barX), num(y), num(w), num(svgBarH), fill)
	}
	if w := svgBarW * fraction(be.Expected, scale); w > 0 {
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="5 3"/>`+"\n",
			num(barX), num(y), num(w), num(svgBarH), colorExpected)
		fmt.Fprintf(b, `<line x1="%[1]s" y1="%[2]s" x2="%[1]s" y2="%[3]s" stroke="%[4]s" stroke-width="3"/>`+"\n", num(barX+w), num(y-5), num(y+svgBarH+5), colorExpected)
	}
	expected := "expected " + traffic.Percent(be.Expected)
	if unexpected(be) {
		expected = "not expected"
	}
	valueX := barX + svgBarW + 14
	fmt.Fprintf(b, `<text x="%s" y="%s"><tspan font-weight="bold">%s</tspan> (%d)</text>`+"\n", num(valueX), num(y+12), traffic.Percent(be.Share), be.Count)
	fmt.Fprintf(b, `<text x="%s" y="%s" font-size="13" fill="%s">%s</text>`+"\n", num(valueX), num(y+30), colorMuted, expected)
}

// shortName is a backend's name as drawn: printable, at most maxName
// characters (the text bars use it too).
func shortName(s string) string {
	s = printable(s)
	if utf8.RuneCountInString(s) > maxName {
		s = string([]rune(s)[:maxName-1]) + "…"
	}
	return s
}

// num formats a coordinate with at most one decimal.
func num(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

// esc escapes text for XML (invalid characters become U+FFFD).
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) //nolint:errcheck // a strings.Builder does not fail
	return b.String()
}
