package trace

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nldump"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

// inventory is the lab as the walk needs it: every host's namespace and
// role, which host owns which address (read from the kernel), and where
// each pod runs.
type inventory struct {
	lab     string
	nodes   []string
	role    map[string]string // host → client, router, node or pod
	owner   map[netip.Addr]string
	podNode map[string]string
	// linkLocal are the hosts holding each IPv6 link-local address: one
	// names its owner, more name none (Calico gives every pod's host-side
	// veth the same MAC, so the same fe80::ecee:eeff:feee:eeee on every
	// node).
	linkLocal map[netip.Addr]map[string]bool
}

// takeInventory lists the lab's namespaces and the addresses in them, of
// both families (IPv6 link-local ones too, when one host holds them: an
// IPv6 route's gateway may be one). Loopback addresses and kube-ipvs0's (every node holds the Service
// addresses there in IPVS mode) name no host.
func takeInventory(l *netns.Lab) (*inventory, error) {
	inv := &inventory{lab: l.Name(), role: map[string]string{}, owner: map[netip.Addr]string{}, podNode: map[string]string{},
		linkLocal: map[netip.Addr]map[string]bool{}}
	for _, n := range l.Topology.Spec.Nodes {
		inv.nodes = append(inv.nodes, n.Name)
		inv.role[n.Name] = "node"
	}
	for _, h := range l.Topology.Hosts() {
		if inv.role[h.Name] == "" {
			inv.role[h.Name] = "client"
		}
	}
	inv.role["router"] = "router"
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		return nil, fmt.Errorf("trace: lab %s: %w", l.Name(), err)
	}
	for _, p := range objs.Pods {
		inv.role[p.Name], inv.podNode[p.Name] = "pod", p.Spec.NodeName
	}
	namespaces, err := network.Namespaces(l.Name())
	if err != nil {
		return nil, err
	}
	for _, ns := range namespaces {
		lab, host, ok := network.SplitNamespaceName(ns)
		if !ok || lab != l.Name() || inv.role[host] == "" {
			continue
		}
		if err := inv.readAddresses(ns, host); err != nil {
			return nil, err
		}
	}
	inv.ownUniqueLinkLocal()
	return inv, nil
}

// ownUniqueLinkLocal adds to owner the link-local addresses exactly one
// host holds.
func (inv *inventory) ownUniqueLinkLocal() {
	for ip, hosts := range inv.linkLocal {
		if len(hosts) != 1 || inv.owner[ip] != "" {
			continue
		}
		for host := range hosts {
			inv.owner[ip] = host
		}
	}
}

func (inv *inventory) readAddresses(ns, host string) error {
	return withHandle(ns, func(h *netlink.Handle) error {
		links, err := nldump.Retry(h.LinkList)
		if err != nil {
			return fmt.Errorf("trace: links of %s: %w", ns, err)
		}
		for _, link := range links {
			if link.Attrs().Name == "kube-ipvs0" {
				continue
			}
			addrs, err := nldump.Retry(func() ([]netlink.Addr, error) { return h.AddrList(link, netlink.FAMILY_ALL) })
			if err != nil {
				return fmt.Errorf("trace: addresses of %s in %s: %w", link.Attrs().Name, ns, err)
			}
			for _, a := range addrs {
				ip, ok := netip.AddrFromSlice(a.IP)
				ip = ip.Unmap()
				if ok && ip.IsLinkLocalUnicast() {
					if inv.linkLocal[ip] == nil {
						inv.linkLocal[ip] = map[string]bool{}
					}
					inv.linkLocal[ip][host] = true
					continue
				}
				if ok && !ip.IsLoopback() && inv.owner[ip] == "" {
					inv.owner[ip] = host
				}
			}
		}
		return nil
	})
}

// namespace is a host's network namespace.
func (inv *inventory) namespace(host string) string { return network.NamespaceName(inv.lab, host) }

func (inv *inventory) isNode(host string) bool { return slices.Contains(inv.nodes, host) }

// withHandle runs fn with a netlink handle inside the named namespace.
func withHandle(ns string, fn func(h *netlink.Handle) error) error {
	nsh, err := vnetns.GetFromName(ns)
	if err != nil {
		return fmt.Errorf("trace: namespace %s: %w", ns, err)
	}
	defer nsh.Close()
	h, err := netlink.NewHandleAt(nsh)
	if err != nil {
		return fmt.Errorf("trace: netlink in %s: %w", ns, err)
	}
	defer h.Close()
	return fn(h)
}
