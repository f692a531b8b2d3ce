package cni

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/nldump"
	"github.com/svclab/svclab/labs/podnet"
)

// Peer is another node as the overlay needs it.
type Peer struct {
	Name    string
	IP      netip.Addr   // InternalIP: where its VXLAN packets go
	PodCIDR netip.Prefix // routed to it
}

// VTEPAddr is a node's VXLAN device address: its podCIDR's network
// address (flannel's and svclab's labs' choice; flanneld gives
// flannel-v6.<VNI> the IPv6 podCIDR's network address the same way).
func VTEPAddr(podCIDR netip.Prefix) netip.Addr { return podCIDR.Masked().Addr() }

// hostPrefix is addr as a host route's destination: a /32 or a /128.
func hostPrefix(addr netip.Addr) *net.IPNet {
	return &net.IPNet{IP: net.IP(addr.AsSlice()), Mask: net.CIDRMask(addr.BitLen(), addr.BitLen())}
}

// ipNet is a prefix as netlink takes it.
func ipNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// netlinkFamily is FAMILY_V4 or FAMILY_V6, the family of addr.
func netlinkFamily(addr netip.Addr) int {
	if addr.Is4() {
		return netlink.FAMILY_V4
	}
	return netlink.FAMILY_V6
}

// ensureVXLAN creates (or keeps) the variant's VXLAN device on the link
// holding local, with the node's VTEP address, and brings it up.
func ensureVXLAN(o Overlay, node string, local netip.Addr, podCIDR netip.Prefix) (netlink.Link, error) {
	under, err := linkWithAddr(local)
	if err != nil {
		return nil, err
	}
	mac := VTEPMAC(node, o.Device)
	link, err := netlink.LinkByName(o.Device)
	if err == nil {
		if vx, ok := link.(*netlink.Vxlan); !ok || vx.VxlanId != o.VNI || vx.Port != o.Port || !vx.SrcAddr.Equal(net.IP(local.AsSlice())) {
			if err := netlink.LinkDel(link); err != nil {
				return nil, err
			}
			link = nil
		}
	} else {
		link = nil
	}
	if link == nil {
		vx := &netlink.Vxlan{
			LinkAttrs:    netlink.LinkAttrs{Name: o.Device, MTU: vxlanMTU(local), HardwareAddr: mac},
			VxlanId:      o.VNI,
			VtepDevIndex: under.Attrs().Index,
			SrcAddr:      net.IP(local.AsSlice()),
			Port:         o.Port,
			Learning:     false,
		}
		if err := netlink.LinkAdd(vx); err != nil {
			return nil, fmt.Errorf("ip link add %s type vxlan id %d dstport %d local %s: %w", o.Device, o.VNI, o.Port, local, err)
		}
		if link, err = netlink.LinkByName(o.Device); err != nil {
			return nil, err
		}
	}
	addr := &netlink.Addr{IPNet: hostPrefix(VTEPAddr(podCIDR))}
	if err := netlink.AddrReplace(link, addr); err != nil {
		return nil, fmt.Errorf("ip addr replace %s dev %s: %w", addr, o.Device, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return nil, err
	}
	return link, nil
}

// vxlanMTU is the VXLAN device's MTU over an underlay address: PodMTU
// over IPv4, the underlay's minus VXLAN over IPv6's 70 bytes over IPv6
// (flanneld's flannel-v6.<VNI>: 1430).
func vxlanMTU(local netip.Addr) int {
	if local.Is4() {
		return PodMTU
	}
	return podnet.UnderlayMTU - podnet.VXLANOverheadIPv6
}

// programPeer writes the route, neighbour and FDB entries for one peer:
//
//	ip route replace <podCIDR> via <vtep> dev <dev> onlink
//	ip neigh replace <vtep> lladdr <mac> dev <dev> nud permanent
//	bridge fdb replace <mac> dev <dev> dst <ip> self permanent
func programPeer(link netlink.Link, o Overlay, p Peer) error {
	mac := VTEPMAC(p.Name, o.Device)
	vtep := net.IP(VTEPAddr(p.PodCIDR).AsSlice())
	idx := link.Attrs().Index
	if err := netlink.NeighSet(&netlink.Neigh{LinkIndex: idx, Family: netlinkFamily(p.PodCIDR.Addr()), State: netlink.NUD_PERMANENT, IP: vtep, HardwareAddr: mac}); err != nil {
		return fmt.Errorf("ip neigh replace %s lladdr %s dev %s: %w", vtep, mac, o.Device, err)
	}
	if err := netlink.NeighSet(&netlink.Neigh{LinkIndex: idx, Family: syscall.AF_BRIDGE, State: netlink.NUD_PERMANENT, Flags: netlink.NTF_SELF,
		IP: net.IP(p.IP.AsSlice()), HardwareAddr: mac}); err != nil {
		return fmt.Errorf("bridge fdb replace %s dev %s dst %s: %w", mac, o.Device, p.IP, err)
	}
	dst := ipNet(p.PodCIDR)
	if err := netlink.RouteReplace(&netlink.Route{LinkIndex: idx, Dst: dst, Gw: vtep, Flags: int(netlink.FLAG_ONLINK)}); err != nil {
		return fmt.Errorf("ip route replace %s via %s dev %s onlink: %w", dst, vtep, o.Device, err)
	}
	return nil
}

// pruneRoutes removes routes of a family (netlink.FAMILY_V4 or _V6) over
// the device to podCIDRs no peer has.
func pruneRoutes(link netlink.Link, family int, peers []Peer) error {
	routes, err := nldump.Retry(func() ([]netlink.Route, error) { return netlink.RouteList(link, family) })
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, p := range peers {
		want[p.PodCIDR.Masked().String()] = true
	}
	var errs []error
	for _, r := range routes {
		if r.Dst == nil || r.Gw == nil {
			continue
		}
		if !want[r.Dst.String()] {
			errs = append(errs, netlink.RouteDel(&r))
		}
	}
	return errors.Join(errs...)
}

// linkWithAddr finds the link holding ip (the node's eth0).
func linkWithAddr(ip netip.Addr) (netlink.Link, error) {
	addrs, err := nldump.Retry(func() ([]netlink.Addr, error) { return netlink.AddrList(nil, netlinkFamily(ip)) })
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if a.IP.Equal(net.IP(ip.AsSlice())) {
			return netlink.LinkByIndex(a.LinkIndex)
		}
	}
	return nil, fmt.Errorf("no link holds the node's InternalIP %s", ip)
}

// blackholeRoute drops traffic to the node's own block that no pod has
// (Felix does the same): ip route replace blackhole <podCIDR>.
func blackholeRoute(podCIDR netip.Prefix) error {
	dst := ipNet(podCIDR)
	if err := netlink.RouteReplace(&netlink.Route{Dst: dst, Type: unix.RTN_BLACKHOLE}); err != nil {
		return fmt.Errorf("ip route replace blackhole %s: %w", dst, err)
	}
	return nil
}
