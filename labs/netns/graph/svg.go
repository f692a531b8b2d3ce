package graph

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// WriteSVG draws g as a self-contained SVG picture (no fonts, styles or
// scripts from elsewhere): a box per host naming it, its namespace, its
// interfaces with their addresses and its routes; the LANs as buses; VXLAN
// tunnels dashed; every pod under its node. See layOut for the layout.
func WriteSVG(w io.Writer, g *Graph) error {
	lay := layOut(g)
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %[1]s %[2]s" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="%s">`+"\n",
		num(lay.w), num(lay.h), num(fontSize))
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(g.Title()))
	fmt.Fprintf(&b, `<rect width="%s" height="%s" fill="#ffffff"/>`+"\n", num(lay.w), num(lay.h))
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="14" font-weight="bold">%s</text>`+"\n", num(margin), num(26), esc(g.Title()))
	for _, bs := range lay.buses {
		writeBus(&b, bs)
	}
	for _, s := range lay.segments {
		writeSegment(&b, s)
	}
	for _, j := range lay.joints {
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3.5" fill="#444444"/>`+"\n", num(j.x), num(j.y))
	}
	for _, bx := range lay.boxes {
		writeBox(&b, bx)
	}
	for _, s := range lay.segments {
		if s.label != "" {
			writeLabel(&b, s.lx, s.ly, s.label)
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeBus(b *strings.Builder, bs bus) {
	dash := ""
	if bs.dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#444444" stroke-width="3"%s/>`+"\n", num(bs.x0-6), num(bs.y), num(bs.x1+6), num(bs.y), dash)
	y := bs.y - 5
	if bs.labelRight {
		y = bs.y + 4
	}
	writeLabel(b, bs.labelX(), y, bs.label)
}

func writeSegment(b *strings.Builder, s segment) {
	dash := ""
	if s.dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#444444" stroke-width="1.5"%s/>`+"\n", num(s.x1), num(s.y1), num(s.x2), num(s.y2), dash)
}

// writeLabel writes small text with a white halo, readable across lines.
func writeLabel(b *strings.Builder, x, y float64, text string) {
	fmt.Fprintf(b, `<text x="%s" y="%s" font-size="%s" fill="#222222" stroke="#ffffff" stroke-width="3" paint-order="stroke">%s</text>`+"\n", num(x), num(y), num(smallSize), esc(text))
}

func writeBox(b *strings.Builder, bx *box) {
	fmt.Fprintf(b, `<g><rect x="%s" y="%s" width="%s" height="%s" rx="6" fill="%s" stroke="#333333"/>`+"\n",
		num(bx.x), num(bx.y), num(bx.w), num(bx.h), roleColor[bx.host.Role])
	for i, l := range bx.lines {
		weight := ""
		if i == 0 {
			weight = ` font-weight="bold"`
		}
		fmt.Fprintf(b, `<text x="%s" y="%s"%s>%s</text>`+"\n", num(bx.x+pad), num(bx.y+pad+fontSize-2+float64(i)*lineH), weight, esc(l))
	}
	b.WriteString("</g>\n")
}

// num writes a coordinate with at most one decimal.
func num(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}

// esc is text made safe for XML character data: markup escaped, and
// characters XML cannot hold replaced (encoding/xml's EscapeText does both).
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
