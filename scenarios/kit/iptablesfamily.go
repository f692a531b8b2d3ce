package kit

import corev1 "k8s.io/api/core/v1"

// IPTablesSaveCommands are the iptables-save programs of family, the
// default one first, then the nft and legacy backends' (a node may keep
// its rules in either): ip6tables-save and its variants for IPv6.
func IPTablesSaveCommands(family corev1.IPFamily) []string {
	if IsIPv6(family) {
		return []string{"ip6tables-save", "ip6tables-nft-save", "ip6tables-legacy-save"}
	}
	return []string{"iptables-save", "iptables-nft-save", "iptables-legacy-save"}
}

// NFTFamily is the nftables family of kube-proxy's table for an IP
// family: ip (IPv4, and "") or ip6.
func NFTFamily(family corev1.IPFamily) string {
	if IsIPv6(family) {
		return "ip6"
	}
	return "ip"
}
