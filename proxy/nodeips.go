package proxy

import (
	"log/slog"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/model"
)

// The node's IPs and the primary IP family, as upstream's kube-proxy
// decides them (cmd/kube-proxy/app/server.go, detectNodeIPs; the node IPs
// come from pkg/util/node GetNodeHostIPs of the Node object).

// nodeHostIPs are the node's host IPs as upstream's GetNodeHostIPs
// returns them: the InternalIPs and then the ExternalIPs of its status,
// the first one and the first one after it of the other family.
func nodeHostIPs(node *corev1.Node) []netip.Addr {
	var all []netip.Addr
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP} {
		for _, a := range node.Status.Addresses {
			if ip, ok := model.ParseAddrSloppy(a.Address); a.Type == t && ok {
				all = append(all, ip)
			}
		}
	}
	return firstOfEachFamily(all)
}

// firstOfEachFamily is ips' first address and the first one after it of
// the other family (none when ips is empty).
func firstOfEachFamily(ips []netip.Addr) []netip.Addr {
	if len(ips) == 0 {
		return nil
	}
	out := []netip.Addr{ips[0]}
	for _, ip := range ips[1:] {
		if ip.Is4() != ips[0].Is4() {
			return append(out, ip)
		}
	}
	return out
}

// detectNodeIPs is upstream's detectNodeIPs: the primary IP family and
// the node IP of each family. In order of precedence: a bind address
// other than 0.0.0.0 and :: is the primary IP; else the node's host IPs
// (the first one's family is the primary one); else IPv4, and the node
// IPs are 127.0.0.1 and ::1.
func detectNodeIPs(rawNodeIPs []netip.Addr, bindAddress string, log *slog.Logger) (corev1.IPFamily, map[corev1.IPFamily]netip.Addr) {
	primary := corev1.IPv4Protocol
	nodeIPs := map[corev1.IPFamily]netip.Addr{
		corev1.IPv4Protocol: netip.MustParseAddr("127.0.0.1"),
		corev1.IPv6Protocol: netip.IPv6Loopback(),
	}
	if len(rawNodeIPs) > 0 {
		primary = familyOf(rawNodeIPs[0])
		nodeIPs[primary] = rawNodeIPs[0]
		if len(rawNodeIPs) > 1 {
			nodeIPs[familyOf(rawNodeIPs[1])] = rawNodeIPs[1]
		}
	}
	if bindIP, ok := model.ParseAddrSloppy(bindAddress); ok && !bindIP.IsUnspecified() {
		primary = familyOf(bindIP)
		nodeIPs[primary] = bindIP
	}
	if nodeIPs[primary].IsLoopback() {
		log.Info("Can't determine this node's IP, assuming loopback; if this is incorrect, please set the --bind-address flag")
	}
	return primary, nodeIPs
}

// familyOf is ip's IP family.
func familyOf(ip netip.Addr) corev1.IPFamily {
	if ip.Unmap().Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// otherFamily is the IP family that is not f.
func otherFamily(f corev1.IPFamily) corev1.IPFamily {
	if f == corev1.IPv6Protocol {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}
