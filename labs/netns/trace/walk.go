package trace

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/nldump"
	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// walk follows the packet from the client host: in each node it finds the
// connection's conntrack entry (whose reply tuple gives the packet's
// addresses after this node's NAT) and, in IPVS mode, the virtual server;
// in every host it asks the kernel for the route to the destination and
// moves to the host that owns the next hop, until the destination is local.
// flows are each node's conntrack entries, dumped right after the
// connection (dumpAll).
func walk(c *Capture, inv *inventory, before, after map[string][]TableCapture, flows map[string][]conntrack.Flow) error {
	host := c.From
	t := Tuple{Src: c.Source, Dst: c.To}
	for range maxHops {
		hc := HostCapture{Host: host, Namespace: inv.namespace(host), Role: inv.role[host], Arrived: t}
		if inv.isNode(host) {
			hc.Tables = pairTables(before[host], after[host])
			if f, ok := MatchFlow(flows[host], c.Proto, t); ok {
				hc.Conntrack = &f
				t = Tuple{Src: f.Reply.Dst, Dst: f.Reply.Src}
			}
			if c.ProxyMode == "ipvs" {
				var err error
				if hc.IPVS, err = ipvsService(hc.Namespace, c.Proto, hc.Arrived.Dst); err != nil {
					return fmt.Errorf("trace: %s: %w", host, err)
				}
			}
		}
		if err := routeFrom(inv, &hc, t.Dst.Addr()); err != nil {
			return err
		}
		c.Hosts = append(c.Hosts, hc)
		if hc.Local || hc.Route == nil || hc.Route.Next == "" {
			return nil
		}
		host = hc.Route.Next
	}
	return nil
}

// dumpAll reads every node's conntrack table.
func dumpAll(inv *inventory) (map[string][]conntrack.Flow, error) {
	flows := map[string][]conntrack.Flow{}
	for _, node := range inv.nodes {
		f, err := conntrack.Dump(inv.namespace(node))
		if err != nil {
			return nil, fmt.Errorf("trace: %s: %w", node, err)
		}
		flows[node] = f
	}
	return flows, nil
}

// pairTables joins each table's reading before with its reading after.
func pairTables(before, after []TableCapture) []TableCapture {
	out := make([]TableCapture, len(before))
	for i := range before {
		out[i] = TableCapture{Table: before[i].Table, Before: before[i].Before}
		if i < len(after) {
			out[i].After = after[i].Before
		}
	}
	return out
}

// MatchFlow finds the conntrack entry whose original direction is the
// packet t of protocol proto (tcp or udp).
func MatchFlow(flows []conntrack.Flow, proto string, t Tuple) (conntrack.Flow, bool) {
	num := map[string]uint8{"tcp": 6, "udp": 17}[proto]
	for _, f := range flows {
		if f.Proto == num && f.Orig.Src == t.Src && f.Orig.Dst == t.Dst {
			return f, true
		}
	}
	return conntrack.Flow{}, false
}

// routeFrom asks the host's kernel for the route to dst (`ip route get`,
// `ip -6 route get` for an IPv6 dst),
// the next hop's neighbour entry, and for a VXLAN device the FDB entry of
// the peer's MAC; it names the lab host that owns the next hop.
func routeFrom(inv *inventory, hc *HostCapture, dst netip.Addr) error {
	return withHandle(hc.Namespace, func(h *netlink.Handle) error {
		routes, err := h.RouteGet(dst.AsSlice())
		if err != nil || len(routes) == 0 {
			return fmt.Errorf("trace: %s: ip route get %s: %v", hc.Host, dst, err)
		}
		r := routes[0]
		if r.Type == unix.RTN_LOCAL {
			hc.Local = true
			return nil
		}
		link, err := h.LinkByIndex(r.LinkIndex)
		if err != nil {
			return fmt.Errorf("trace: %s: link %d: %w", hc.Host, r.LinkIndex, err)
		}
		rt := &Route{Dst: dst, Dev: link.Attrs().Name}
		rt.Gateway = addrOf(r.Gw)
		rt.Src = addrOf(r.Src)
		hop := dst
		if rt.Gateway.IsValid() {
			hop = rt.Gateway
		}
		rt.Neighbour = neighbourMAC(h, r.LinkIndex, hop)
		rt.Next = inv.owner[hop]
		if v, ok := link.(*netlink.Vxlan); ok {
			rt.VXLAN = vxlanHop(h, v, hop, rt.Neighbour)
			if rt.Next == "" {
				rt.Next = inv.owner[rt.VXLAN.Remote]
			}
		}
		if rt.Next == "" && hc.Role == "pod" { // a pod's gateway (Calico's 169.254.1.1) is its node
			rt.Next = inv.podNode[hc.Host]
		}
		hc.Route = rt
		return nil
	})
}

// addrOf is a netlink address as a netip.Addr of its family (IPv4
// unmapped); the zero Addr for none.
func addrOf(ip []byte) netip.Addr {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.Addr{}
	}
	return a.Unmap()
}

// neighbourMAC is ip's `ip neigh show dev DEV to IP` (`ip -6 neigh` for
// an IPv6 next hop) link-layer address.
func neighbourMAC(h *netlink.Handle, linkIndex int, ip netip.Addr) string {
	family := netlink.FAMILY_V4
	if ip.Is6() {
		family = netlink.FAMILY_V6
	}
	neighs, err := nldump.Retry(func() ([]netlink.Neigh, error) { return h.NeighList(linkIndex, family) })
	if err != nil {
		return ""
	}
	for _, n := range neighs {
		if addrOf(n.IP) == ip && len(n.HardwareAddr) > 0 {
			return n.HardwareAddr.String()
		}
	}
	return ""
}

// vxlanHop reads the VXLAN device and the FDB entry of the peer's MAC
// (`bridge fdb show dev flannel.1`).
func vxlanHop(h *netlink.Handle, v *netlink.Vxlan, peer netip.Addr, mac string) *VXLANHop {
	hop := &VXLANHop{Dev: v.Name, VNI: v.VxlanId, Port: v.Port, PeerVTEP: peer, PeerMAC: mac}
	hop.Local = addrOf(v.SrcAddr)
	fdb, err := nldump.Retry(func() ([]netlink.Neigh, error) { return h.NeighList(v.Index, unix.AF_BRIDGE) })
	if err != nil {
		return hop
	}
	for _, n := range fdb {
		if strings.EqualFold(n.HardwareAddr.String(), mac) {
			hop.Remote = addrOf(n.IP)
			break
		}
	}
	return hop
}

// ipvsService is the IPVS virtual server for dst and its real servers
// (`ipvsadm -Ln -t DST`), nil when there is none.
func ipvsService(ns, proto string, dst netip.AddrPort) (*IPVSService, error) {
	k, err := kernel.Open(ns)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	vss, err := k.VirtualServers()
	if err != nil {
		return nil, err
	}
	for _, vs := range vss {
		if vs.Address != dst.Addr() || vs.Port != dst.Port() || vs.Protocol.Lower() != proto {
			continue
		}
		rss, err := k.RealServers(vs)
		if err != nil {
			return nil, err
		}
		s := &IPVSService{Virtual: fmt.Sprintf("%s %s %s", vs.Protocol, netip.AddrPortFrom(vs.Address, vs.Port), vs.Scheduler)}
		for _, rs := range rss {
			s.RealServers = append(s.RealServers, rs.Key())
		}
		return s, nil
	}
	return nil, nil
}
