package network

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"
	nlraw "github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/nsthread"
)

// AnnounceAddr sends a gratuitous ARP for a pod's address from its eth0,
// as the CNI bridge plugin does once it has set the address: it waits for
// the node's end of the veth to be up (the plugin retries after 0, 50, 500,
// 1000 and 1000 ms), then sends one ARP announcement (an ARP request whose
// sender and target are the pod's own address, RFC 5227 section 2.3; the
// plugin sends it with github.com/j-keck/arping). Every neighbour on the
// bridge that holds an entry for the address — the node on cni0, the other
// pods — replaces the MAC in it: without the announcement a pod that gets
// the address of a deleted one is unreachable for as long as those entries
// stay REACHABLE with the old MAC (15–45 s, then DELAY and PROBE).
//
// The step is sent over a packet socket made in the pod's namespace, so no
// program runs. It then checks that the node took the new MAC: if the node
// has an entry for the address on Bridge, it must hold eth0's MAC within a
// second, else the step fails (a kernel that ignored the announcement
// would leave the pod unreachable while apply says it is in place).
//
//	ip netns exec <NS> arping -q -c 1 -U -I <Link> <IP>
type AnnounceAddr struct {
	NS, Link string
	IP       netip.Addr
	// NodeNS is the node's namespace, NodeVeth the node's end of the pod's
	// veth, Bridge the node link that holds the pod's neighbour entry.
	NodeNS, NodeVeth, Bridge string
}

func (s AnnounceAddr) Namespace() string { return s.NS }
func (s AnnounceAddr) Command() string {
	return fmt.Sprintf("ip netns exec %s arping -q -c 1 -U -I %s %s", s.NS, s.Link, s.IP)
}

// portUpRetries are the bridge plugin's waits for the node's end of the
// veth to be up before it announces the address.
var portUpRetries = []time.Duration{0, 50 * time.Millisecond, 500 * time.Millisecond, time.Second, time.Second}

// announceTimeout bounds the wait for the node's neighbour entry to take
// the new MAC.
const announceTimeout = time.Second

func (s AnnounceAddr) apply(x *executor) error {
	node, err := x.conn(s.NodeNS)
	if err != nil {
		return err
	}
	if err := waitOperUp(node.nl, s.NodeNS, s.NodeVeth); err != nil {
		return err
	}
	c, l, err := x.link(s.NS, s.Link)
	if err != nil {
		return err
	}
	mac := l.Attrs().HardwareAddr
	pkt, err := gratuitousARP(mac, s.IP)
	if err != nil {
		return err
	}
	err = nsthread.Do(s.NS, c.ns, func() error { return sendARP(l.Attrs().Index, pkt) })
	if err != nil {
		return fmt.Errorf("gratuitous ARP for %s from %s in %s: %w", s.IP, s.Link, s.NS, err)
	}
	route, err := x.routeSocket(s.NodeNS)
	if err != nil {
		return err
	}
	_, bridge, err := x.link(s.NodeNS, s.Bridge)
	if err != nil {
		return err
	}
	return waitNeighMAC(route, s.NodeNS, bridge, s.IP, mac)
}

// waitOperUp waits, as the bridge plugin does, until link is up.
func waitOperUp(h *netlink.Handle, ns, link string) error {
	var state netlink.LinkOperState
	for _, d := range portUpRetries {
		time.Sleep(d)
		l, err := h.LinkByName(link)
		if err != nil {
			return fmt.Errorf("find link %s in %s: %w", link, ns, err)
		}
		if state = l.Attrs().OperState; state == netlink.OperUp {
			return nil
		}
	}
	return fmt.Errorf("link %s in %s is %s, not up", link, ns, state)
}

// waitNeighMAC waits until the entry for ip on link (in namespace ns,
// whose NETLINK_ROUTE socket route is), if there is one, holds mac.
func waitNeighMAC(route *nlraw.SocketHandle, ns string, l netlink.Link, ip netip.Addr, mac net.HardwareAddr) error {
	link := l.Attrs().Name
	deadline := time.Now().Add(announceTimeout)
	for {
		held, err := neighMAC(route, l.Attrs().Index, ip)
		if err != nil {
			return fmt.Errorf("neighbours of %s in %s: %w", link, ns, err)
		}
		if held == nil || held.String() == mac.String() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s in %s: the neighbour entry for %s still holds %s, not the pod's %s, %v after the gratuitous ARP",
				link, ns, ip, held, mac, announceTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// neighMAC is the MAC of the IPv4 neighbour entry for ip on a link, nil
// when there is none or it holds no address (INCOMPLETE, FAILED), asked
// of the kernel for that one entry (RTM_GETNEIGH with the link and
// NDA_DST, as `ip neigh get IP dev LINK`; Linux 5.0 and later) on route, a
// NETLINK_ROUTE socket in the entry's namespace. A dump of the link's
// entries, which it was, walks the machine's whole ARP table, every
// namespace's entries (`neigh_dump_info`): in a 100-node lab ~10,000
// VXLAN neighbours for each pod attached.
func neighMAC(route *nlraw.SocketHandle, index int, ip netip.Addr) (net.HardwareAddr, error) {
	req := nlraw.NewNetlinkRequest(unix.RTM_GETNEIGH, 0)
	req.Sockets = map[int]*nlraw.SocketHandle{unix.NETLINK_ROUTE: route}
	req.AddData(&netlink.Ndmsg{Family: unix.AF_INET, Index: uint32(index)})
	req.AddData(nlraw.NewRtAttr(unix.NDA_DST, ip.AsSlice()))
	msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWNEIGH)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		n, err := netlink.NeighDeserialize(m)
		if err != nil {
			return nil, err
		}
		if a, ok := netip.AddrFromSlice(n.IP); ok && a.Unmap() == ip && n.LinkIndex == index && len(n.HardwareAddr) > 0 &&
			n.State&(netlink.NUD_INCOMPLETE|netlink.NUD_FAILED) == 0 {
			return n.HardwareAddr, nil
		}
	}
	return nil, nil
}

// gratuitousARP is the ARP payload that announces ip at mac: a request
// (opcode 1) from mac and ip for ip itself, the target hardware address
// zero (RFC 5227 section 2.3, an ARP Announcement; Linux takes a request
// whose sender and target addresses are equal as gratuitous and replaces
// the MAC of an existing entry).
func gratuitousARP(mac net.HardwareAddr, ip netip.Addr) ([]byte, error) {
	if len(mac) != 6 || !ip.Is4() {
		return nil, fmt.Errorf("gratuitous ARP: want an Ethernet MAC and an IPv4 address, have %q and %s", mac, ip)
	}
	b := make([]byte, 0, 28)
	b = binary.BigEndian.AppendUint16(b, 1)      // hardware type: Ethernet
	b = binary.BigEndian.AppendUint16(b, 0x0800) // protocol type: IPv4
	b = append(b, 6, 4)                          // hardware and protocol address lengths
	b = binary.BigEndian.AppendUint16(b, 1)      // opcode: request
	a := ip.As4()
	b = append(b, mac...)
	b = append(b, a[:]...)
	b = append(b, make([]byte, 6)...)
	b = append(b, a[:]...)
	return b, nil
}

// sendARP broadcasts an ARP payload on the link with index ifindex of the
// calling thread's namespace (a cooked packet socket: the kernel adds the
// Ethernet header with the link's own MAC as source).
func sendARP(ifindex int, pkt []byte) error {
	proto := htons(unix.ETH_P_ARP)
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, int(proto))
	if err != nil {
		return fmt.Errorf("packet socket: %w", err)
	}
	defer unix.Close(fd)
	to := &unix.SockaddrLinklayer{
		Protocol: proto,
		Ifindex:  ifindex,
		Halen:    6,
		Addr:     [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	}
	if err := unix.Sendto(fd, pkt, 0, to); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// htons puts a 16-bit value in network byte order, as packet sockets want
// their protocol.
func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

var _ Step = AnnounceAddr{}
