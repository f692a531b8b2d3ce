package conformance

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/svclab/svclab/scenarios/kit"
	corev1 "k8s.io/api/core/v1"
)

// masquerade is what the proxy in force does to connections to a cluster
// IP, as upstream v1.36's proxiers derive it from the configuration
// (pkg/proxy/iptables/proxier.go, "Set up internal traffic handling";
// pkg/proxy/nftables/proxier.go, the services chain's masquerade rule;
// the local-traffic detectors of pkg/proxy/util/localdetector.go and
// cmd/kube-proxy/app/server_linux.go's getLocalDetectors): with
// masqueradeAll every connection is marked for masquerade; otherwise,
// when the detectLocalMode can tell a pod's traffic apart, every
// connection that is not from a local pod; otherwise none.
type masquerade struct {
	// Rule says whether a rule marks cluster-IP traffic at all.
	Rule bool
	// NotLocal is the detector's "not from a local pod" match as the
	// iptables proxier writes it (["!", "-s", "10.244.0.0/16"], ["!",
	// "-i", "veth+"]); NotLocalNFT the nftables proxier's (["ip",
	// "saddr", "!=", "10.244.0.0/16"], ["iifname", "!=", "veth*"]). Both
	// empty with masqueradeAll, which matches every connection.
	NotLocal, NotLocalNFT []string
	// FromPod and FromOutside say whether connections from a pod (on the
	// node they enter at) and from outside the pod network (a node's host
	// network, or beyond) are marked, and so SNATed.
	FromPod, FromOutside bool
	// Why is the configuration it follows from, for messages.
	Why string
}

// expectedMasquerade is masquerade for the configuration cfg, on node
// (whose pod range detectLocalMode NodeCIDR uses), for connections of
// family ("" is IPv4): each family's proxier has its own detector, which
// takes the first cluster CIDR of its family (upstream's
// getLocalDetectors), and writes its match with `ip6 saddr` in IPv6's
// nftables table.
func expectedMasquerade(cfg kit.ProxyConfig, node kit.Node, family corev1.IPFamily) masquerade {
	family = kit.FamilyOrIPv4(family)
	name := familyName(family)
	if cfg.MasqueradeAll {
		return masquerade{Rule: true, FromPod: true, FromOutside: true, Why: "masqueradeAll: every connection to a cluster IP is masqueraded"}
	}
	none := func(why string) masquerade {
		return masquerade{Why: "no local-traffic detector (" + why + "): no connection to a cluster IP is marked for masquerade"}
	}
	byCIDR := func(cidr netip.Prefix, why string) masquerade {
		c := cidr.Masked().String()
		return masquerade{Rule: true, NotLocal: []string{"!", "-s", c}, NotLocalNFT: []string{kit.NFTFamily(family), "saddr", "!=", c},
			FromOutside: true, Why: why + ": connections from outside " + c + " are masqueraded"}
	}
	byInterface := func(name, why string) masquerade {
		nft := strings.TrimSuffix(name, "+")
		if nft != name {
			nft += "*"
		}
		return masquerade{Rule: true, NotLocal: []string{"!", "-i", name}, NotLocalNFT: []string{"iifname", "!=", nft},
			FromOutside: true, Why: why + ": connections that do not come in on " + name + " are masqueraded"}
	}
	switch cfg.DetectLocalMode {
	case kit.DetectLocalClusterCIDR, "":
		cidr, ok := firstOfFamily(cfg.ClusterCIDRs, family)
		if !ok {
			return none("detectLocalMode ClusterCIDR without an " + name + " clusterCIDR")
		}
		return byCIDR(cidr, "detectLocalMode ClusterCIDR, clusterCIDR "+cidr.String())
	case kit.DetectLocalNodeCIDR:
		if !node.PodCIDR.IsValid() || kit.FamilyOf(node.PodCIDR.Addr()) != family {
			return none("detectLocalMode NodeCIDR, and node " + node.Name + " has no " + name + " podCIDR")
		}
		return byCIDR(node.PodCIDR, fmt.Sprintf("detectLocalMode NodeCIDR, node %s's podCIDR %s", node.Name, node.PodCIDR))
	case kit.DetectLocalBridgeInterface:
		return byInterface(cfg.BridgeInterface, "detectLocalMode BridgeInterface "+cfg.BridgeInterface)
	case kit.DetectLocalInterfaceNamePrefix:
		return byInterface(cfg.InterfaceNamePrefix+"+", "detectLocalMode InterfaceNamePrefix "+cfg.InterfaceNamePrefix)
	default:
		return none("detectLocalMode " + cfg.DetectLocalMode + " is none upstream knows")
	}
}

// firstOfFamily is the first prefix of family of cidrs.
func firstOfFamily(cidrs []string, family corev1.IPFamily) (netip.Prefix, bool) {
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(strings.TrimSpace(c)); err == nil && kit.FamilyOf(p.Addr()) == family {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// familyName is how messages name a family: IPv4, IPv6.
func familyName(family corev1.IPFamily) string { return string(kit.FamilyOrIPv4(family)) }

// marks says whether a connection from client is marked for masquerade.
func (m masquerade) marks(from kit.Client) bool {
	if from.Pod == "" {
		return m.FromOutside
	}
	return m.FromPod
}

// iptablesRule is the KUBE-SVC chain's masquerade rule of the cluster IP
// ip:port of Service portName (TCP), as iptables-save prints it ("" when
// there is none): the proxier writes `-m comment --comment … -m tcp -p tcp
// -d IP --dport PORT [not-local] -j KUBE-MARK-MASQ`; iptables-save puts
// the source and destination first, then the input interface, then the
// protocol and the matches in order.
func (m masquerade) iptablesRule(ip netip.Addr, port int, portName string) string {
	if !m.Rule {
		return ""
	}
	src, iface := "", ""
	if len(m.NotLocal) == 3 {
		switch m.NotLocal[1] {
		case "-s":
			src = "! -s " + m.NotLocal[2] + " "
		case "-i":
			iface = " ! -i " + m.NotLocal[2]
		}
	}
	return fmt.Sprintf(`%s-d %s/%d%s -p tcp -m comment --comment "%s cluster IP" -m tcp --dport %d -j KUBE-MARK-MASQ`, src, ip, kit.HostPrefixLen(kit.FamilyOf(ip)), iface, portName, port)
}

// nftMatch is the not-local match as `nft` lists it ("ip saddr !=
// 10.244.0.0/16", "ip6 saddr != fd00:10:244::/56", "iifname != veth*";
// "" with masqueradeAll).
func (m masquerade) nftMatch() string {
	return strings.Join(m.NotLocalNFT, " ")
}
