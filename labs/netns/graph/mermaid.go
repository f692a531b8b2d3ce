package graph

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteMermaid renders g as a Mermaid flowchart: the same vertices and
// edges as WriteDOT (hosts, bridges, veth pairs, dashed VXLAN tunnels).
// Vertex ids are generated (h0, h0b0…), so any name is safe; labels are
// quoted with Mermaid's entity codes for the characters it treats as syntax.
func WriteMermaid(w io.Writer, g *Graph) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%%%% %s, drawn by svclab graph\n", mermaidLine(g.Title()))
	b.WriteString("flowchart TB\n")
	ids := map[End]string{} // host (Interface "") or bridge → vertex id
	for hi, h := range g.Hosts {
		id := fmt.Sprintf("h%d", hi)
		ids[End{Host: h.Name}] = id
		lines := append([]string{"<b>" + mermaidText(h.heading()) + "</b>"}, mermaidTexts(h.details())...)
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", id, strings.Join(lines, "<br/>"))
		fmt.Fprintf(&b, "  style %s fill:%s\n", id, roleColor[h.Role])
		for ii, i := range h.Interfaces {
			if i.Kind != IfBridge {
				continue
			}
			bid := fmt.Sprintf("h%db%d", hi, ii)
			ids[End{h.Name, i.Name}] = bid
			fmt.Fprintf(&b, "  %s([\"%s\"])\n", bid, strings.Join(mermaidTexts(strings.Split(bridgeText(i), "\n")), "<br/>"))
			fmt.Fprintf(&b, "  %s === %s\n", id, bid)
		}
	}
	for _, l := range g.Links {
		a, z := g.mermaidEnd(ids, l.A), g.mermaidEnd(ids, l.B)
		if a == "" || z == "" || l.Kind != LinkVeth {
			continue
		}
		fmt.Fprintf(&b, "  %s ---|\"%s\"| %s\n", a, mermaidText(vethLabel(l)), z)
	}
	g.mermaidTunnels(&b, ids)
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidTunnels draws the VXLAN tunnels of each device (one per IP
// family on a dual-stack lab) as one overlay vertex listing the pairs
// ("vxlan", then "vxlan2"…), joined by a dashed edge to each VTEP
// (labelled with its address and the underlay address it sends from). An
// edge between two nodes would put one a rank below the other; Mermaid has
// no rank=same.
func (g *Graph) mermaidTunnels(b *strings.Builder, ids map[End]string) {
	for n, links := range g.tunnelDevices() {
		vertex := "vxlan"
		if n > 0 {
			vertex = fmt.Sprintf("vxlan%d", n+1)
		}
		pairs := []string{mermaidText("VXLAN " + g.vxlanLabel(links[0]))}
		var vteps []End
		for _, l := range links {
			pairs = append(pairs, mermaidText(l.A.Host+" ↔ "+l.B.Host))
			for _, e := range []End{l.A, l.B} {
				if !slices.Contains(vteps, e) {
					vteps = append(vteps, e)
				}
			}
		}
		fmt.Fprintf(b, "  %s{{\"%s\"}}\n", vertex, strings.Join(pairs, "<br/>"))
		for _, e := range vteps {
			if id := ids[End{Host: e.Host}]; id != "" {
				fmt.Fprintf(b, "  %s -.-|\"%s\"| %s\n", id, mermaidText(g.vtepText(e)), vertex)
			}
		}
	}
}

// vtepText: "flannel.1 10.100.40.0/32 from 192.168.16.73".
func (g *Graph) vtepText(e End) string {
	h, ok := g.Host(e.Host)
	if !ok {
		return e.Interface
	}
	i, ok := h.Interface(e.Interface)
	if !ok {
		return e.Interface
	}
	s := i.Name
	for _, a := range i.Addrs {
		s += " " + a.String()
	}
	if i.VXLAN != nil && i.VXLAN.Local.IsValid() {
		s += " from " + i.VXLAN.Local.String()
	}
	return s
}

func (g *Graph) mermaidEnd(ids map[End]string, e End) string {
	if br, ok := g.bridgeOf(e); ok {
		return ids[End{e.Host, br}]
	}
	return ids[End{Host: e.Host}]
}

func mermaidTexts(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = mermaidText(l)
	}
	return out
}

// mermaidText escapes a label: Mermaid's entity codes (#quot; …) for the
// characters that end or mark up a quoted label, and no line breaks.
func mermaidText(s string) string {
	return strings.NewReplacer(
		"#", "#35;", `"`, "#quot;", "<", "#lt;", ">", "#gt;", "&", "#amp;",
		"|", "#124;", "`", "#96;", "\n", " ", "\r", " ",
	).Replace(s)
}

// mermaidLine keeps a comment on one line.
func mermaidLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
