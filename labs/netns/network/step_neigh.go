package network

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// AddNeigh adds a permanent ARP entry: the remote VTEP's overlay address
// resolves to its MAC without any ARP on the overlay.
//
//	ip -n <NS> neigh add <IP> lladdr <MAC> dev <Dev> nud permanent
type AddNeigh struct {
	NS, Dev string
	IP      netip.Addr
	MAC     net.HardwareAddr
}

func (s AddNeigh) Namespace() string { return s.NS }
func (s AddNeigh) Command() string {
	return fmt.Sprintf("ip -n %s neigh add %s lladdr %s dev %s nud permanent", s.NS, s.IP, s.MAC, s.Dev)
}

func (s AddNeigh) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Dev)
	if err != nil {
		return err
	}
	return c.nl.NeighAdd(&netlink.Neigh{
		LinkIndex:    l.Attrs().Index,
		Family:       addrFamily(s.IP),
		State:        netlink.NUD_PERMANENT,
		IP:           net.IP(s.IP.AsSlice()),
		HardwareAddr: s.MAC,
	})
}

// addrFamily is a's address family for netlink (AF_INET or AF_INET6).
func addrFamily(a netip.Addr) int {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

// AddFDB adds a permanent forwarding entry to a VXLAN device: frames for
// MAC are encapsulated towards the underlay address Dst.
//
//	bridge -n <NS> fdb add <MAC> dev <Dev> dst <Dst> self permanent
type AddFDB struct {
	NS, Dev string
	MAC     net.HardwareAddr
	Dst     netip.Addr
}

func (s AddFDB) Namespace() string { return s.NS }
func (s AddFDB) Command() string {
	return fmt.Sprintf("bridge -n %s fdb add %s dev %s dst %s self permanent", s.NS, s.MAC, s.Dev, s.Dst)
}

func (s AddFDB) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Dev)
	if err != nil {
		return err
	}
	return c.nl.NeighAdd(&netlink.Neigh{
		LinkIndex:    l.Attrs().Index,
		Family:       unix.AF_BRIDGE,
		State:        netlink.NUD_PERMANENT,
		Flags:        netlink.NTF_SELF,
		IP:           net.IP(s.Dst.AsSlice()),
		HardwareAddr: s.MAC,
	})
}

// PinPodNeigh writes a permanent ARP entry for a pod on its node's cali*
// interface, with the MAC of the pod's eth0 read when the step runs (the
// kernel picks it). That is what Felix does for every local workload
// (projectcalico/felix routetable: `arp -s <pod IP> <pod MAC> -i cali…`,
// the MAC taken from the WorkloadEndpoint the CNI plugin wrote). "replace"
// makes it hold whatever entry the address had.
//
//	ip -n <NS> neigh replace <IP> lladdr $(ip netns exec <PodNS> cat /sys/class/net/<PodLink>/address) dev <Dev> nud permanent
type PinPodNeigh struct {
	NS, Dev        string
	IP             netip.Addr
	PodNS, PodLink string
}

func (s PinPodNeigh) Namespace() string { return s.NS }
func (s PinPodNeigh) Command() string {
	return fmt.Sprintf("ip -n %s neigh replace %s lladdr $(ip netns exec %s cat /sys/class/net/%s/address) dev %s nud permanent",
		s.NS, s.IP, s.PodNS, s.PodLink, s.Dev)
}

func (s PinPodNeigh) apply(x *executor) error {
	_, pod, err := x.link(s.PodNS, s.PodLink)
	if err != nil {
		return err
	}
	c, l, err := x.link(s.NS, s.Dev)
	if err != nil {
		return err
	}
	return c.nl.NeighSet(&netlink.Neigh{
		LinkIndex:    l.Attrs().Index,
		Family:       unix.AF_INET,
		State:        netlink.NUD_PERMANENT,
		IP:           net.IP(s.IP.AsSlice()),
		HardwareAddr: pod.Attrs().HardwareAddr,
	})
}
