package graph

import (
	"fmt"
	"net/netip"
	"strings"
)

// Text shared by the renderers: what a host's box says, line by line.

// Title is the graph's caption.
func (g *Graph) Title() string {
	return fmt.Sprintf("svclab lab %s (cni %s)", g.Lab, g.CNI)
}

// heading is a host's first line: its name and role.
func (h *Host) heading() string {
	if h.Role == RolePod {
		return fmt.Sprintf("%s (pod on %s)", h.Name, h.Node)
	}
	return fmt.Sprintf("%s (%s)", h.Name, h.Role)
}

// details are the lines under the heading: the namespace, one line per
// interface, one per route.
func (h *Host) details() []string {
	lines := []string{"netns " + h.Namespace}
	for _, i := range h.Interfaces {
		lines = append(lines, i.describe())
	}
	for _, r := range h.Routes {
		lines = append(lines, r.describe())
	}
	return lines
}

// describe: "eth0 veth 192.168.16.73/20", "cni0 bridge 10.244.1.1/24",
// "flannel.1 vxlan id 1 dstport 8472 10.100.40.0/32",
// "cali0123456789a veth proxy_arp", "hosta veth master lan0".
func (i *Interface) describe() string {
	parts := []string{i.Name, string(i.Kind)}
	if v := i.VXLAN; v != nil {
		parts = append(parts, fmt.Sprintf("id %d dstport %d", v.VNI, v.Port))
	}
	for _, a := range i.Addrs {
		parts = append(parts, a.String())
	}
	if i.Master != "" {
		parts = append(parts, "master "+i.Master)
	}
	if i.ProxyARP {
		parts = append(parts, "proxy_arp")
	}
	return strings.Join(parts, " ")
}

// describe: "default via 192.168.31.254", "10.254.0.0/16 via 192.168.16.73",
// "10.100.81.0/24 via 10.100.81.0 dev flannel.1", "blackhole 10.100.40.0/24".
func (r Route) describe() string {
	dst := "default"
	if r.Dst.IsValid() {
		dst = r.Dst.String()
	}
	if r.Blackhole {
		return "blackhole " + dst
	}
	s := dst + " via " + r.Gw.String()
	if r.Dev != "" && r.Dev != "eth0" {
		s += " dev " + r.Dev
	}
	return s
}

// vxlanLabel names a tunnel: "flannel.1 VNI 1 udp/8472".
func (g *Graph) vxlanLabel(l Link) string {
	if h, ok := g.Host(l.A.Host); ok {
		if i, ok := h.Interface(l.A.Interface); ok && i.VXLAN != nil {
			return fmt.Sprintf("%s VNI %d udp/%d", i.Name, i.VXLAN.VNI, i.VXLAN.Port)
		}
	}
	return l.A.Interface + " vxlan"
}

// tunnelDevices groups the VXLAN links by device (one per IP family on a
// dual-stack lab: flannel.1 and flannel-v6.1), in the order the links
// name them.
func (g *Graph) tunnelDevices() [][]Link {
	var groups [][]Link
	at := map[string]int{}
	for _, l := range g.Links {
		if l.Kind != LinkVXLAN {
			continue
		}
		i, ok := at[l.A.Interface]
		if !ok {
			i = len(groups)
			at[l.A.Interface] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], l)
	}
	return groups
}

// tunnelDevicesText names every VXLAN device: "flannel.1 VNI 1 udp/8472",
// "flannel.1 VNI 1 udp/8472 and flannel-v6.1 VNI 1 udp/8472".
func (g *Graph) tunnelDevicesText() string {
	var names []string
	for _, links := range g.tunnelDevices() {
		names = append(names, g.vxlanLabel(links[0]))
	}
	return strings.Join(names, " and ")
}

// vethLabel names a veth pair by its two ends: "hosta ↔ eth0".
func vethLabel(l Link) string { return l.A.Interface + " ↔ " + l.B.Interface }

// bridgeSubnets are the subnets of a bridge's addresses, in its order
// (one per IP family on a dual-stack lab).
func (i *Interface) bridgeSubnets() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(i.Addrs))
	for _, a := range i.Addrs {
		out = append(out, a.Masked())
	}
	return out
}

// bridgeOf is the bridge a link's end is a port of, if any: the host's
// interface named by the end's master.
func (g *Graph) bridgeOf(e End) (string, bool) {
	h, ok := g.Host(e.Host)
	if !ok {
		return "", false
	}
	i, ok := h.Interface(e.Interface)
	if !ok || i.Master == "" {
		return "", false
	}
	if m, ok := h.Interface(i.Master); ok && m.Kind == IfBridge {
		return m.Name, true
	}
	return "", false
}
