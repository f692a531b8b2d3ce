package proxy

import (
	"net"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// nodePortSelection is where one family's node ports answer: nil CIDRs
// mean every local address (nodePortAddresses unset, or a /0 of the
// family: upstream's MatchAll); otherwise the node's addresses inside the
// CIDRs.
type nodePortSelection struct {
	CIDRs     []netip.Prefix
	Addresses []netip.Addr
}

// nodePortCIDRsOf are the nodePortAddresses of family, as upstream's
// newProxyServer and NewNodePortAddresses make them: "primary" is the
// node's IP of each family as a /32 or /128 (none when it is loopback),
// "localhost" and "all" the keywords of k8s.io/kube-proxy's API
// (127.0.0.0/8 and ::1/128; 0.0.0.0/0 and ::/0), the other entries CIDRs
// of the family. nil when the family has none or one of them is /0:
// every local address.
func nodePortCIDRsOf(entries []string, family corev1.IPFamily, nodeIPs map[corev1.IPFamily]netip.Addr) []netip.Prefix {
	var cidrs []netip.Prefix
	for _, e := range entries {
		switch e {
		case "primary":
			for _, f := range []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol} {
				if ip := nodeIPs[f]; ip.IsValid() && !ip.IsLoopback() {
					cidrs = append(cidrs, netip.PrefixFrom(ip, ip.BitLen()))
				}
			}
		case "localhost":
			cidrs = append(cidrs, netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
		case "all":
			cidrs = append(cidrs, netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0"))
		default:
			if p, err := netip.ParsePrefix(e); err == nil {
				cidrs = append(cidrs, p.Masked())
			}
		}
	}
	var out []netip.Prefix
	for _, c := range cidrs {
		if familyOf(c.Addr()) != family {
			continue
		}
		if c.Bits() == 0 {
			return nil
		}
		out = append(out, c)
	}
	return out
}

// selectNodePorts resolves the nodePortAddresses of family against the
// node's addresses (upstream's GetNodeIPs, over net.InterfaceAddrs in
// tests' stead when given), once, when the proxy starts.
func selectNodePorts(entries []string, family corev1.IPFamily, nodeIPs map[corev1.IPFamily]netip.Addr, interfaceAddrs func() ([]net.Addr, error)) (nodePortSelection, error) {
	cidrs := nodePortCIDRsOf(entries, family, nodeIPs)
	if cidrs == nil {
		return nodePortSelection{}, nil
	}
	addrs, err := interfaceAddrs()
	if err != nil {
		return nodePortSelection{}, err
	}
	sel := nodePortSelection{CIDRs: cidrs}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		for _, c := range cidrs {
			if c.Contains(ip) && !slices.Contains(sel.Addresses, ip) {
				sel.Addresses = append(sel.Addresses, ip)
			}
		}
	}
	slices.SortFunc(sel.Addresses, netip.Addr.Compare)
	return sel, nil
}
