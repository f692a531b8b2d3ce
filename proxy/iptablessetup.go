package proxy

import (
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/iptables"
)

// The sysctls upstream's iptables NewProxier (pkg/proxy/iptables/proxier.go)
// writes and reads.
const (
	sysctlRouteLocalnet           = "net/ipv4/conf/all/route_localnet"
	sysctlNFConntrackTCPBeLiberal = "net/netfilter/nf_conntrack_tcp_be_liberal"
)

// routeLocalnetMessage is upstream's log line, word for word.
const routeLocalnetMessage = "Setting route_localnet=1 to allow node-ports on localhost; to change this either disable iptables.localhostNodePorts (--iptables-localhost-nodeports) or set nodePortAddresses (--nodeport-addresses) to filter loopback addresses"

// setUpIPTablesKernel does to and reads from the kernel what upstream's
// iptables NewProxier does before its first sync, in sys (the proxy's own
// network namespace), and returns the renderer options of cfg:
//
//  1. localhost node ports (cfg.IPv4LocalhostNodePorts: the default) need
//     net.ipv4.conf.all.route_localnet=1, so that a packet to
//     127.0.0.1:<nodePort> may be routed to a pod after DNAT
//     (https://issues.k8s.io/90259); it is set when it differs, and a
//     failure stops the proxy as it stops upstream's. Nothing sets it back
//     to 0 later, as upstream.
//  2. a non-zero net.netfilter.nf_conntrack_tcp_be_liberal leaves out the
//     rule that drops INVALID packets.
//
// RandomFully is left for the caller, who knows the iptables binary.
//
// For the IPv6 proxier (family IPv6) there are no localhost node ports and
// no route_localnet, as upstream's IPv6 proxier.
func setUpIPTablesKernel(cfg config.Config, family corev1.IPFamily, sys sysctls, log *slog.Logger) (iptables.Options, error) {
	opts := iptables.Options{
		ClusterCIDR:        clusterCIDROf(cfg, family),
		MasqueradeBit:      cfg.MasqueradeBit,
		MasqueradeAll:      cfg.MasqueradeAll,
		LocalhostNodePorts: family != corev1.IPv6Protocol && cfg.IPv4LocalhostNodePorts(),
	}
	if family == corev1.IPv6Protocol {
		opts.Family = family
	}
	if opts.LocalhostNodePorts {
		log.Info(routeLocalnetMessage)
		if err := ensureSysctl(sys, sysctlRouteLocalnet, 1, log); err != nil {
			return opts, err
		}
	}
	if v, err := sys.Get(sysctlNFConntrackTCPBeLiberal); err == nil && v != 0 {
		opts.ConntrackTCPBeLiberal = true
		log.Info("nf_conntrack_tcp_be_liberal set, not installing DROP rules for INVALID packets")
	}
	return opts, nil
}

// clusterCIDROf is cfg's cluster CIDR of family ("" if none): the
// renderer of a family detects local traffic by its own family's CIDR.
func clusterCIDROf(cfg config.Config, family corev1.IPFamily) string {
	if family == "" {
		family = corev1.IPv4Protocol
	}
	if cidrs := clusterCIDRsOf(cfg, family); len(cidrs) > 0 {
		return cidrs[0].String()
	}
	return ""
}
