package config

import (
	"net"

	netutils "k8s.io/utils/net"
)

// IPv4LocalhostNodePorts reports whether the iptables mode serves node
// ports on 127.0.0.0/8, as upstream's iptables NewProxier decides for its
// IPv4 proxier: iptables.localhostNodePorts is true and the IPv4 part of
// nodePortAddresses contains IPv4 loopback (NodePortAddresses.
// ContainsIPv4Loopback; an empty IPv4 part means 0.0.0.0/0, which does).
// When it holds, the proxy sets net.ipv4.conf.all.route_localnet=1 in its
// network namespace, and the renderer adds the KUBE-FIREWALL rule and
// leaves "! -d 127.0.0.0/8" off the KUBE-NODEPORTS jump. IPv6 never serves
// node ports on loopback.
//
// Keywords: "primary" stands for the node's primary IP as a /32, never
// loopback; "localhost" (127.0.0.0/8 and ::1/128) and "all" (0.0.0.0/0 and
// ::/0) are the keywords k8s.io/kube-proxy v0.37's API documents.
func (c Config) IPv4LocalhostNodePorts() bool {
	return c.LocalhostNodePorts && nodePortAddressesContainIPv4Loopback(c.NodePortAddresses)
}

// ipv4LoopbackStart is 127.0.0.0, as upstream's proxyutil.
var ipv4LoopbackStart = net.IPv4(127, 0, 0, 0)

// nodePortAddressesContainIPv4Loopback is upstream's NewNodePortAddresses
// (IPv4 family) followed by ContainsIPv4Loopback.
func nodePortAddressesContainIPv4Loopback(entries []string) bool {
	var cidrs []string
	for _, e := range entries {
		switch e {
		case "primary":
			cidrs = append(cidrs, "192.0.2.1/32") // stands for the node IP: any non-loopback /32
		case "localhost":
			cidrs = append(cidrs, "127.0.0.0/8")
		case "all":
			cidrs = append(cidrs, "0.0.0.0/0")
		default:
			if netutils.IsIPv4CIDRString(e) {
				cidrs = append(cidrs, e)
			}
		}
	}
	if len(cidrs) == 0 {
		cidrs = []string{"0.0.0.0/0"}
	}
	for _, s := range cidrs {
		_, cidr, err := netutils.ParseCIDRSloppy(s)
		if err != nil || !netutils.IsIPv4CIDR(cidr) {
			continue
		}
		if cidr.IP.IsLoopback() || cidr.Contains(ipv4LoopbackStart) {
			return true
		}
	}
	return false
}
