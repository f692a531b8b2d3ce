package proxy

import (
	"maps"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/model"
)

// Stale UDP flows. A UDP flow's conntrack entry keeps the DNAT it got from
// its first datagram for as long as datagrams keep coming, so a client that
// sends from one source port goes on sending to an endpoint that is gone
// (kubernetes#48370), or to nowhere when its first datagram came while the
// Service had no endpoint. After every successful sync the loop deletes the
// UDP entries whose original destination is a UDP Service's address
// (ClusterIP, external IP, load balancer VIP with the service port, or a
// node port) and whose reply source is not one of that Service port's
// serving endpoints; the next datagram is then a new flow, translated by
// the rules just written. Upstream: pkg/proxy/conntrack CleanStaleEntries,
// called at the end of every mode's syncProxyRules. Unlike upstream, which
// keys service IPs by address alone (the last UDP port of an address wins),
// a service address here is address and port, so a multi-port Service's
// flows are judged by their own port's endpoints.

// staleUDPFilter tells, for the Services of one snapshot, which UDP flows
// are stale.
type staleUDPFilter struct {
	// byAddr maps a service address (IP and service port) to the IPs of
	// its serving endpoints; byNodePort maps a node port likewise.
	byAddr     map[netip.AddrPort]map[netip.Addr]bool
	byNodePort map[uint16]map[netip.Addr]bool
}

// newStaleUDPFilter collects the UDP service ports of snap with their
// serving endpoints (ready or not, terminating or not: a change of policy
// or readiness does not break a flow, as upstream).
func newStaleUDPFilter(snap *model.Snapshot) *staleUDPFilter {
	f := &staleUDPFilter{byAddr: map[netip.AddrPort]map[netip.Addr]bool{}, byNodePort: map[uint16]map[netip.Addr]bool{}}
	for _, sp := range snap.ServicePorts {
		if sp.Protocol != corev1.ProtocolUDP {
			continue
		}
		serving := map[netip.Addr]bool{}
		for _, ep := range sp.Endpoints {
			if ep.Serving {
				serving[ep.IP] = true
			}
		}
		port := uint16(sp.Port)
		for _, ip := range append(append([]netip.Addr{sp.ClusterIP}, sp.ExternalIPs...), sp.LoadBalancerVIPs...) {
			if ip.IsValid() {
				f.byAddr[netip.AddrPortFrom(ip, port)] = serving
			}
		}
		if sp.NodePort != 0 {
			f.byNodePort[uint16(sp.NodePort)] = serving
		}
	}
	return f
}

// equal reports whether f and g judge every flow alike: the same service
// addresses and node ports, each with the same serving endpoints.
func (f *staleUDPFilter) equal(g *staleUDPFilter) bool {
	return maps.EqualFunc(f.byAddr, g.byAddr, maps.Equal) && maps.EqualFunc(f.byNodePort, g.byNodePort, maps.Equal)
}

// empty reports whether the snapshot has no UDP service port: nothing to
// clean, and no need to read the conntrack table.
func (f *staleUDPFilter) empty() bool { return len(f.byAddr) == 0 && len(f.byNodePort) == 0 }

// stale reports whether a flow of the IP protocol proto, originally to
// origDst, whose replies come from replySrc, is stale: UDP, to a service
// address or a node port, and not answered by a serving endpoint.
func (f *staleUDPFilter) stale(proto uint8, origDst netip.AddrPort, replySrc netip.Addr) bool {
	if proto != unix.IPPROTO_UDP {
		return false
	}
	if serving, ok := f.byAddr[origDst]; ok && !serving[replySrc] {
		return true
	}
	if serving, ok := f.byNodePort[origDst.Port()]; ok && !serving[replySrc] {
		return true
	}
	return false
}

// MatchConntrackFlow implements netlink.CustomConntrackFilter.
func (f *staleUDPFilter) MatchConntrackFlow(flow *netlink.ConntrackFlow) bool {
	dst, ok1 := addrOf(flow.Forward.DstIP)
	src, ok2 := addrOf(flow.Reverse.SrcIP)
	return ok1 && ok2 && f.stale(flow.Forward.Protocol, netip.AddrPortFrom(dst, flow.Forward.DstPort), src)
}

func addrOf(ip net.IP) (netip.Addr, bool) {
	a, ok := netip.AddrFromSlice(ip)
	return a.Unmap(), ok
}

// CleanStaleUDPFlows deletes the stale UDP flows of snap's Services from
// the conntrack table of the proxy's network namespace (its node's) and
// returns how many it deleted. It reads the entries of snap's IP family
// only (AF_INET6 for an IPv6 snapshot), as each of upstream's per-family
// proxiers cleans its own family's.
//
// A namespace without any conntrack entry has no stale flow, and its table
// is not read: the kernel's dump walks every bucket of the machine's one
// conntrack hash table (262,144 here) whatever the namespace holds, ~4 ms
// of kernel CPU each (`perf` of a 100-node lab's create: 8% of its CPU in
// ctnetlink_dump_table under the proxies' first syncs). That spares a
// namespace that has had no traffic, a node before its first packet; a
// lab node whose cni0 is up has an entry within a second (the bridge's
// IGMP membership report), so its proxy still reads the table, as
// upstream's does after every sync. The count (nf_conntrack_count, one
// per namespace) is read on the thread that would dump, so it is the same
// namespace's; a flow made after it was read went through the rules
// already written, which send only to serving endpoints.
func CleanStaleUDPFlows(snap *model.Snapshot) (int, error) {
	f := newStaleUDPFilter(snap)
	if f.empty() || !namespaceHasConntrackEntries() {
		return 0, nil
	}
	n, err := conntrackDeleteFilters(netlink.ConntrackTable, conntrackFamily(snap.Family), f)
	return int(n), err
}

// conntrackDeleteFilters is the kernel boundary: one dump of a family's
// entries, and a delete of each one a filter matches (a variable so that a
// test can count the dumps).
var conntrackDeleteFilters = netlink.ConntrackDeleteFilters

// conntrackCountFile holds the number of conntrack entries of the network
// namespace of the thread that opens it.
const conntrackCountFile = "/proc/sys/net/netfilter/nf_conntrack_count"

// namespaceHasConntrackEntries reports whether the calling thread's
// network namespace has a conntrack entry; true when the count cannot be
// read, so that the table is then read as before.
func namespaceHasConntrackEntries() bool {
	b, err := os.ReadFile(conntrackCountFile)
	if err != nil {
		return true
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err != nil || n > 0
}

// conntrackFamily is the netlink address family of an IP family's
// conntrack entries.
func conntrackFamily(f corev1.IPFamily) netlink.InetFamily {
	if f == corev1.IPv6Protocol {
		return unix.AF_INET6
	}
	return unix.AF_INET
}
