package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// WriteSVG draws r as a self-contained SVG picture (no fonts, styles or
// scripts from elsewhere): two panels side by side, the proxy's part of
// the programming time (objects in the lab store → rule in the kernel:
// the lab's own apply is the same in every mode and left out) and the
// late Service's p99 connect latency against the number of Services,
// both axes linear (so that O(n) is a straight line and O(1) a flat one),
// one line with dots per mode, a legend, and a line for every skipped mode
// saying why.
func WriteSVG(w io.Writer, r *Result) error {
	series := seriesOf(r)
	var b strings.Builder
	height := svgHeight + lineHeight*float64(len(skippedModes(r)))
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %[1]s %[2]s" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		num(svgWidth), num(height))
	title := "svclab bench dataplane: " + machineLine(r.Machine)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(&b, `<rect width="%s" height="%s" fill="#ffffff"/>`+"\n", num(svgWidth), num(height))
	fmt.Fprintf(&b, `<text x="%s" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", num(margin), esc(title))
	xs := serviceCounts(r)
	drawPanel(&b, panel{x: margin + axisGap, title: "programming: objects stored → rule in the kernel (s)",
		value: func(run Run) (float64, bool) { return run.Programming.ProxyMs / 1000, true }}, series, xs)
	drawPanel(&b, panel{x: margin + axisGap + panelWidth + panelGap, title: "p99 TCP connect, last Service of the list (ms)",
		value: func(run Run) (float64, bool) {
			if run.Late == nil || run.Late.N == 0 {
				return 0, false
			}
			return run.Late.P99Ms, true
		}}, series, xs)
	drawLegend(&b, series)
	y := svgHeight - 6
	for _, s := range skippedModes(r) {
		fmt.Fprintf(&b, `<text x="%s" y="%s" fill="#555555">%s</text>`+"\n", num(margin), num(y), esc(s))
		y += lineHeight
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

const (
	svgWidth    = 960.0
	svgHeight   = 420.0
	margin      = 16.0
	axisGap     = 48.0 // room for the y tick labels
	panelWidth  = 390.0
	panelGap    = 90.0
	panelTop    = 64.0
	panelHeight = 250.0
	lineHeight  = 16.0
)

// modeColors are fixed per mode, so that two plots compare at a glance.
var modeColors = map[string]string{
	"iptables":        "#1f77b4",
	"iptables-legacy": "#ff7f0e",
	"iptables-nft":    "#2ca02c",
	"nftables":        "#d62728",
	"ipvs":            "#9467bd",
}

func colorOf(mode string) string {
	if c, ok := modeColors[mode]; ok {
		return c
	}
	return "#7f7f7f"
}

// series is one mode's measured runs, in increasing number of Services.
type series struct {
	mode string
	runs []Run
}

func seriesOf(r *Result) []series {
	var out []series
	for _, run := range r.Runs {
		if !run.Measured() {
			continue
		}
		i := slices.IndexFunc(out, func(s series) bool { return s.mode == run.Mode })
		if i < 0 {
			out = append(out, series{mode: run.Mode})
			i = len(out) - 1
		}
		out[i].runs = append(out[i].runs, run)
	}
	for _, s := range out {
		slices.SortStableFunc(s.runs, func(a, b Run) int { return a.Services - b.Services })
	}
	return out
}

// serviceCounts are the distinct numbers of Services measured, ascending.
func serviceCounts(r *Result) []int {
	var xs []int
	for _, run := range r.Runs {
		if run.Measured() && !slices.Contains(xs, run.Services) {
			xs = append(xs, run.Services)
		}
	}
	slices.Sort(xs)
	return xs
}

// skippedModes says, once per mode, why a mode has no line.
func skippedModes(r *Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, run := range r.Runs {
		why := run.Skipped
		if why == "" {
			why = run.Error
		}
		if why == "" || seen[run.Mode] {
			continue
		}
		seen[run.Mode] = true
		out = append(out, fmt.Sprintf("%s (%d Services): %s", run.Mode, run.Services, oneLine(why)))
	}
	return out
}

type panel struct {
	x     float64
	title string
	value func(Run) (float64, bool)
}

func drawPanel(b *strings.Builder, p panel, all []series, xs []int) {
	top, bottom, right := panelTop, panelTop+panelHeight, p.x+panelWidth
	fmt.Fprintf(b, `<text x="%s" y="%s" font-weight="bold">%s</text>`+"\n", num(p.x-axisGap+8), num(top-14), esc(p.title))
	value := func(run Run) (float64, bool) { // drawable values only
		v, ok := p.value(run)
		return v, ok && v >= 0 && v <= maxPlotted && !math.IsNaN(v)
	}
	maxY := 0.0
	for _, s := range all {
		for _, run := range s.runs {
			if v, ok := value(run); ok {
				maxY = math.Max(maxY, v)
			}
		}
	}
	if maxY < minPlotted {
		maxY = 0 // an axis of 0…1: nothing measurable to scale to
	}
	step := niceStep(maxY / 4)
	ceil := step * math.Ceil(maxY/step)
	if ceil == 0 {
		ceil = step
	}
	maxX := 1
	if len(xs) > 0 {
		maxX = max(1, xs[len(xs)-1])
	}
	px := func(n int) float64 { return p.x + panelWidth*float64(n)/float64(maxX) }
	py := func(v float64) float64 { return bottom - panelHeight*v/ceil }
	for v := 0.0; v <= ceil+step/2; v += step {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%[2]s" stroke="#e0e0e0"/>`+"\n", num(p.x), num(py(v)), num(right))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end">%s</text>`+"\n", num(p.x-6), num(py(v)+4), esc(tickLabel(v, step)))
	}
	for _, n := range xs {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%[1]s" y2="%s" stroke="#444444"/>`+"\n", num(px(n)), num(bottom), num(bottom+5))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%d</text>`+"\n", num(px(n)), num(bottom+18), n)
	}
	fmt.Fprintf(b, `<polyline points="%s,%s %[1]s,%[3]s %[4]s,%[3]s" fill="none" stroke="#444444"/>`+"\n", num(p.x), num(top), num(bottom), num(right))
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">Services</text>`+"\n", num(p.x+panelWidth/2), num(bottom+34))
	for _, s := range all {
		var pts []string
		for _, run := range s.runs {
			if v, ok := value(run); ok {
				pts = append(pts, num(px(run.Services))+","+num(py(v)))
			}
		}
		if len(pts) == 0 {
			continue
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), colorOf(s.mode))
		for _, pt := range pts {
			x, y, _ := strings.Cut(pt, ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`+"\n", x, y, colorOf(s.mode))
		}
	}
}

func drawLegend(b *strings.Builder, all []series) {
	x, y := margin+axisGap, panelTop+panelHeight+58
	for _, s := range all {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%[2]s" stroke="%s" stroke-width="3"/>`+"\n", num(x), num(y-4), num(x+22), colorOf(s.mode))
		fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`+"\n", num(x+28), num(y), esc(s.mode))
		x += 40 + 8*float64(len(s.mode))
	}
}

// The values a panel draws: seconds or milliseconds from a microsecond
// (smaller ones count as 0) to a year; others are left out.
const (
	minPlotted = 1e-3
	maxPlotted = 3.2e10
)

// niceStep rounds a step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}

// tickLabel prints v with as many decimals as the step needs.
func tickLabel(v, step float64) string {
	dec := 0
	if step < 1 {
		dec = min(6, int(math.Ceil(-math.Log10(step))))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

func machineLine(m Machine) string {
	return fmt.Sprintf("%d CPUs, kernel %s", m.CPUs, m.Kernel)
}

// num prints a coordinate with at most one decimal.
func num(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) //nolint:errcheck // a strings.Builder does not fail
	return b.String()
}
