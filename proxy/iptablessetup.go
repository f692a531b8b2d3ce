package proxy

import (
	"log/slog"

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
func setUpIPTablesKernel(cfg config.Config, sys sysctls, log *slog.Logger) (iptables.Options, error) {
	opts := iptables.Options{
		ClusterCIDR:        ipv4ClusterCIDR(cfg),
		MasqueradeBit:      cfg.MasqueradeBit,
		MasqueradeAll:      cfg.MasqueradeAll,
		LocalhostNodePorts: cfg.IPv4LocalhostNodePorts(),
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

// ipv4ClusterCIDR is the IPv4 one of cfg's cluster CIDRs ("" if none): the
// renderer writes IPv4 rules only.
func ipv4ClusterCIDR(cfg config.Config) string {
	var cidr string
	for _, c := range cfg.ClusterCIDRs {
		if c.Addr().Is4() {
			cidr = c.String()
		}
	}
	return cidr
}
