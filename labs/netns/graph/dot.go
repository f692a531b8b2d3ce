package graph

import (
	"fmt"
	"io"
	"strings"
)

// WriteDOT renders g as a Graphviz graph: a box per host listing its
// interfaces and routes, an ellipse per bridge (joined to its host), veth
// pairs as solid edges (from the bridge when one end is a bridge port) and
// VXLAN tunnels as dashed ones. `dot -Tsvg` draws it.
func WriteDOT(w io.Writer, g *Graph) error {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s, drawn by svclab graph\n", mermaidLine(g.Title())) // a comment kept on one line
	fmt.Fprintf(&b, "graph %s {\n", dotQuote(g.Lab))
	fmt.Fprintf(&b, "  graph [label=%s, labelloc=t, fontname=monospace, nodesep=0.4, ranksep=0.6];\n", dotQuote(g.Title()))
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=monospace, fontsize=10];\n")
	b.WriteString("  edge [fontname=monospace, fontsize=9];\n")
	var nodes []string
	for _, h := range g.Hosts {
		fmt.Fprintf(&b, "  %s [label=%s, fillcolor=%s];\n", dotQuote(h.Name), dotLabel(h.heading(), h.details()), dotQuote(roleColor[h.Role]))
		for _, i := range h.Interfaces {
			if i.Kind != IfBridge {
				continue
			}
			id := dotQuote(h.Name + "/" + i.Name)
			fmt.Fprintf(&b, "  %s [shape=ellipse, style=filled, fillcolor=\"#eeeeee\", label=%s];\n", id, dotQuote(bridgeText(i)))
			fmt.Fprintf(&b, "  %s -- %s [penwidth=2];\n", dotQuote(h.Name), id)
		}
		if h.Role == RoleNode {
			nodes = append(nodes, dotQuote(h.Name))
		}
	}
	if len(nodes) > 0 {
		fmt.Fprintf(&b, "  { rank=same; %s; }\n", strings.Join(nodes, "; "))
	}
	for _, l := range g.Links {
		a, z := g.dotEnd(l.A), g.dotEnd(l.B)
		switch l.Kind {
		case LinkVXLAN:
			fmt.Fprintf(&b, "  %s -- %s [style=dashed, label=%s];\n", a, z, dotQuote(g.vxlanLabel(l)))
		default:
			fmt.Fprintf(&b, "  %s -- %s [label=%s];\n", a, z, dotQuote(vethLabel(l)))
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// dotEnd is the vertex a link's end attaches to: its bridge, or its host.
func (g *Graph) dotEnd(e End) string {
	if br, ok := g.bridgeOf(e); ok {
		return dotQuote(e.Host + "/" + br)
	}
	return dotQuote(e.Host)
}

// bridgeText: "lan0 bridge\n192.168.31.254/20".
func bridgeText(i Interface) string {
	s := i.Name + " bridge"
	for _, a := range i.Addrs {
		s += "\n" + a.String()
	}
	return s
}

// dotLabel is a left-aligned multi-line label: heading, then the details.
func dotLabel(heading string, lines []string) string {
	var b strings.Builder
	b.WriteByte('"')
	b.WriteString(dotEscape(heading))
	b.WriteString(`\l`)
	for _, l := range lines {
		b.WriteString(dotEscape(l))
		b.WriteString(`\l`)
	}
	b.WriteByte('"')
	return b.String()
}

// dotQuote is a DOT double-quoted string; newlines become centred breaks.
func dotQuote(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = dotEscape(l)
	}
	return `"` + strings.Join(lines, `\n`) + `"`
}

// dotEscape escapes what is special in a DOT quoted string: backslash (the
// start of \n, \l, \N…), the quote, and raw line breaks.
func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ", "\r", " ").Replace(s)
}

// roleColor fills a host's box by its role, the same in every renderer.
var roleColor = map[Role]string{
	RoleRouter: "#fde2b3",
	RoleNode:   "#cfe3ff",
	RoleClient: "#d9f2d0",
	RolePod:    "#f3e0f7",
}
