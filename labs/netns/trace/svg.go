package trace

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Sizes of the picture, in pixels (monospace: every character charW wide).
const (
	svgFont   = 12.0
	svgSmall  = 11.0
	svgCharW  = 7.3
	svgSmallW = 6.7
	svgLineH  = 16.0
	svgPad    = 8.0
	svgMargin = 20.0
	svgTop    = 48.0
	svgMinGap = 90.0
)

// svgHop is one box and the arrow that leaves it.
type svgHop struct {
	lines  []string // box text, the first in bold
	arrow  []string // labels of the arrow to the next box
	x, w   float64
	h      float64
	vxlan  bool
	colour string
}

// WriteSVG draws the packet's path as a self-contained SVG picture: the
// hosts as boxes left to right, an arrow per hop labelled with its route,
// and the rewrites (DNAT a→b, SNAT c→d, VXLAN) where they happen.
func WriteSVG(w io.Writer, r *Result) error {
	hops := svgHops(r)
	x, height := svgMargin, 0.0
	for i := range hops {
		h := &hops[i]
		h.x = x
		for _, l := range h.lines {
			h.w = max(h.w, textW(l, svgCharW)+2*svgPad)
		}
		h.h = float64(len(h.lines))*svgLineH + 2*svgPad
		height = max(height, h.h)
		gap := svgMinGap
		for _, l := range h.arrow {
			gap = max(gap, textW(l, svgSmallW)+24)
		}
		x += h.w
		if i < len(hops)-1 {
			x += gap
		}
	}
	title := fmt.Sprintf("svclab trace: %s %s -> %s from %s (lab %s)", r.Proto, r.Source, r.To, r.From, r.Lab)
	foot := summaryLines(r)
	width := max(x+svgMargin, textW(title, 8.2)+2*svgMargin)
	for _, l := range foot {
		width = max(width, textW(l, svgSmallW)+2*svgMargin)
	}
	total := svgTop + height + 30 + float64(len(foot))*svgLineH + svgMargin

	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %[1]s %[2]s" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="%s">`+"\n", num(width), num(total), num(svgFont))
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#333333"/></marker></defs>` + "\n")
	fmt.Fprintf(&b, `<rect width="%s" height="%s" fill="#ffffff"/>`+"\n", num(width), num(total))
	fmt.Fprintf(&b, `<text x="%s" y="28" font-size="14" font-weight="bold">%s</text>`+"\n", num(svgMargin), esc(title))
	for i, h := range hops {
		writeSVGBox(&b, h)
		if i < len(hops)-1 {
			writeSVGArrow(&b, h, hops[i+1])
		}
	}
	y := svgTop + height + 30
	for _, l := range foot {
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="%s">%s</text>`+"\n", num(svgMargin), num(y), num(svgSmall), esc(l))
		y += svgLineH
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// roleColour fills a box by the host's role.
var roleColour = map[string]string{"client": "#e8f0fe", "router": "#f1f3f4", "node": "#fef7e0", "pod": "#e6f4ea"}

// svgHops are the boxes: what each host did, and the arrow's labels.
func svgHops(r *Result) []svgHop {
	var out []svgHop
	for _, h := range r.Hops {
		s := svgHop{colour: roleColour[h.Role]}
		if s.colour == "" {
			s.colour = "#ffffff"
		}
		s.lines = append(s.lines, h.Host, h.Role, "in: "+h.Arrived.Src.String()+" →", "    "+h.Arrived.Dst.String())
		for _, c := range matchedChains(h.Rules) {
			s.lines = append(s.lines, "  "+c)
		}
		if h.DNAT != nil {
			s.lines = append(s.lines, "DNAT "+h.DNAT.From.String()+" → "+h.DNAT.To.String())
			if h.DNAT.By != "" {
				s.lines = append(s.lines, "  by "+h.DNAT.By+" (conntrack)")
			}
		}
		if h.RealServer != "" {
			s.lines = append(s.lines, "IPVS real server "+h.RealServer)
		}
		if h.SNAT != nil {
			s.lines = append(s.lines, "SNAT "+h.SNAT.From.Addr().String()+" → "+h.SNAT.To.Addr().String())
		}
		if h.Local {
			s.lines = append(s.lines, "local: connection ends here")
		}
		if rt := h.Route; rt != nil {
			via := rt.Dst.String()
			if rt.Gateway.IsValid() {
				via = "via " + rt.Gateway.String()
			}
			s.arrow = append(s.arrow, "to "+rt.Dst.String(), via+" dev "+rt.Dev)
			if v := rt.VXLAN; v != nil {
				s.vxlan = true
				s.arrow = append(s.arrow, fmt.Sprintf("VXLAN VNI %d", v.VNI), fmt.Sprintf("%s → %s:%d", v.Local, v.Remote, v.Port))
			}
		}
		out = append(out, s)
	}
	return out
}

// matchedChains are the user chains a hop's matched rules belong to, each once.
func matchedChains(rules []RuleHit) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Depth == 0 || seen[r.Chain] || r.Table != "nat" {
			continue
		}
		seen[r.Chain] = true
		out = append(out, r.Chain)
	}
	return out
}

// summaryLines are the picture's footer.
func summaryLines(r *Result) []string {
	s := r.Summary
	out := []string{"method: " + r.Method + " (rules whose packet counters grew; rewrites from conntrack)"}
	if s.ConfirmedSEP != "" {
		out = append(out, fmt.Sprintf("endpoint chain confirmed by conntrack: %s → %s", s.ConfirmedSEP, s.Endpoint))
	}
	if s.RealServer != "" {
		out = append(out, "IPVS real server: "+s.RealServer)
	}
	if s.Masquerade.IsValid() {
		out = append(out, fmt.Sprintf("masquerade: %s on %s", s.Masquerade, s.MasqueradeOn))
	}
	for _, v := range s.VXLAN {
		out = append(out, fmt.Sprintf("VXLAN: %s %s → %s (VTEP %s, underlay %s)", v.From, v.Dev, v.To, v.PeerVTEP, v.Remote))
	}
	if r.Error != "" {
		out = append(out, "connection failed: "+r.Error)
	}
	return out
}

func writeSVGBox(b *strings.Builder, h svgHop) {
	fmt.Fprintf(b, `<g><rect x="%s" y="%s" width="%s" height="%s" rx="6" fill="%s" stroke="#333333"/>`+"\n", num(h.x), num(svgTop), num(h.w), num(h.h), h.colour)
	for i, l := range h.lines {
		weight := ""
		if i == 0 {
			weight = ` font-weight="bold"`
		}
		fmt.Fprintf(b, `<text x="%s" y="%s"%s>%s</text>`+"\n", num(h.x+svgPad), num(svgTop+svgPad+svgFont-2+float64(i)*svgLineH), weight, esc(l))
	}
	b.WriteString("</g>\n")
}

func writeSVGArrow(b *strings.Builder, from, to svgHop) {
	y := svgTop + 2*svgLineH + svgPad + 4
	dash := ""
	if from.vxlan {
		dash = ` stroke-dasharray="6 4"`
	}
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333333" stroke-width="1.5" marker-end="url(#arrow)"%s/>`+"\n", num(from.x+from.w), num(y), num(to.x-2), num(y), dash)
	above := min(len(from.arrow), 2)
	for i, l := range from.arrow {
		ly := y - 6 - float64(above-1-i)*svgLineH
		if i >= 2 { // the VXLAN lines go under the arrow
			ly = y + 16 + float64(i-2)*svgLineH
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" font-size="%s" fill="#222222">%s</text>`+"\n", num(from.x+from.w+10), num(ly), num(svgSmall), esc(l))
	}
}

func textW(s string, cw float64) float64 { return float64(utf8.RuneCountInString(s)) * cw }

// num writes a coordinate with at most one decimal.
func num(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") }

// esc is text made safe for XML character data.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
