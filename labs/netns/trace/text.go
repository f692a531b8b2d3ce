package trace

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes r for a terminal: the connection, how rules were found,
// each hop with its matched rules, conntrack entry, rewrites and route, and
// a summary.
func WriteText(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "trace: lab %s, %s from %s %s to %s (proxy mode %s)\n", r.Lab, r.Proto, r.From, r.Source, r.To, r.ProxyMode)
	if r.Error != "" {
		fmt.Fprintf(&b, "connection failed: %s\n", r.Error)
	} else if r.Answer != "" {
		fmt.Fprintf(&b, "answered by: %s\n", r.Answer)
	}
	fmt.Fprintf(&b, "method: %s — %s\n", r.Method, r.MethodNote)
	for i, h := range r.Hops {
		writeHopText(&b, i+1, h)
	}
	writeSummaryText(&b, r.Summary)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeHopText(b *strings.Builder, n int, h Hop) {
	fmt.Fprintf(b, "\n[%d] %s (%s, netns %s)\n", n, h.Host, h.Role, h.Namespace)
	fmt.Fprintf(b, "    packet: %s -> %s\n", h.Arrived.Src, h.Arrived.Dst)
	if len(h.Rules) > 0 {
		b.WriteString("    rules matched (packet counter deltas):\n")
		for _, r := range h.Rules {
			index := fmt.Sprintf("#%d", r.Index)
			if r.Index == 0 {
				index = "policy"
			}
			fmt.Fprintf(b, "      %s%-6s %s %s: %s  (+%d)\n", strings.Repeat("  ", r.Depth), r.Table, r.Chain, index, r.Spec, r.Packets)
		}
	}
	for _, c := range h.Unchecked {
		fmt.Fprintf(b, "    not compared (its rules changed between the readings): %s\n", c)
	}
	if h.IPVS != nil {
		fmt.Fprintf(b, "    ipvs: %s -> %s\n", h.IPVS.Virtual, strings.Join(h.IPVS.RealServers, ", "))
	}
	if h.Conntrack != "" {
		fmt.Fprintf(b, "    conntrack: %s\n", h.Conntrack)
	}
	if h.DNAT != nil {
		why := "the endpoint in conntrack's reply tuple is its DNAT target"
		if h.RealServer != "" {
			why = "the endpoint in conntrack's reply tuple is one of its real servers"
		}
		fmt.Fprintf(b, "    DNAT %s -> %s%s\n", h.DNAT.From, h.DNAT.To, by(h.DNAT.By, why))
	}
	if h.RealServer != "" {
		fmt.Fprintf(b, "    IPVS real server: %s (conntrack's reply tuple)\n", h.RealServer)
	}
	if h.SNAT != nil {
		fmt.Fprintf(b, "    SNAT %s -> %s (masquerade)%s\n", h.SNAT.From, h.SNAT.To, by(h.SNAT.By, "its MASQUERADE rule matched"))
	}
	for _, note := range h.Notes {
		fmt.Fprintf(b, "    note: %s\n", note)
	}
	if h.Local {
		fmt.Fprintf(b, "    %s is this host's own address: the connection ends here\n", h.Arrived.Dst.Addr())
	}
	if rt := h.Route; rt != nil {
		fmt.Fprintf(b, "    route: %s\n", routeText(rt))
		if v := rt.VXLAN; v != nil {
			fmt.Fprintf(b, "    VXLAN: %s VNI %d: inner packet to VTEP %s (MAC %s), FDB sends it to %s, outer UDP %s -> %s:%d\n",
				v.Dev, v.VNI, v.PeerVTEP, v.PeerMAC, v.Remote, v.Local, v.Remote, v.Port)
		}
	}
}

func by(chain, why string) string {
	if chain == "" {
		return ""
	}
	return fmt.Sprintf(" by %s (%s)", chain, why)
}

func routeText(rt *Route) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", rt.Dst)
	if rt.Gateway.IsValid() {
		fmt.Fprintf(&b, " via %s", rt.Gateway)
	}
	fmt.Fprintf(&b, " dev %s", rt.Dev)
	if rt.Src.IsValid() {
		fmt.Fprintf(&b, " src %s", rt.Src)
	}
	if rt.Neighbour != "" {
		fmt.Fprintf(&b, " lladdr %s", rt.Neighbour)
	}
	next := rt.Next
	if next == "" {
		next = "(no lab host)"
	}
	fmt.Fprintf(&b, " -> %s", next)
	return b.String()
}

func writeSummaryText(b *strings.Builder, s Summary) {
	b.WriteString("\nsummary:\n")
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(b, "  %-36s %s\n", k+":", v)
		}
	}
	line("reached", s.Reached)
	line("service chains matched", strings.Join(s.ServiceChains, ", "))
	line("endpoint chains matched", strings.Join(s.EndpointChains, ", "))
	if s.ConfirmedSEP != "" {
		line("endpoint chain confirmed by conntrack", fmt.Sprintf("%s (DNAT to %s)", s.ConfirmedSEP, s.Endpoint))
	} else if s.Endpoint.IsValid() {
		line("endpoint (conntrack DNAT)", s.Endpoint.String())
	}
	line("IPVS real server", s.RealServer)
	if s.Masquerade.IsValid() {
		line("masquerade (SNAT) address", fmt.Sprintf("%s on %s", s.Masquerade, s.MasqueradeOn))
	}
	for _, v := range s.VXLAN {
		line("VXLAN hop", fmt.Sprintf("%s %s -> %s (VTEP %s, underlay %s -> %s, VNI %d, port %d)", v.From, v.Dev, v.To, v.PeerVTEP, v.Local, v.Remote, v.VNI, v.Port))
	}
}
