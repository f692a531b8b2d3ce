package calico

import (
	"fmt"
	"net/netip"
	"strings"
)

// PoolCIDR is the IPv4 pool calico-node creates from manifest: the value
// of an uncommented CALICO_IPV4POOL_CIDR env entry, else DefaultPoolCIDR.
func PoolCIDR(manifest string) (netip.Prefix, error) {
	lines := strings.Split(manifest, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "- name: CALICO_IPV4POOL_CIDR" || i+1 >= len(lines) {
			continue
		}
		v, ok := strings.CutPrefix(strings.TrimSpace(lines[i+1]), "value:")
		if !ok {
			return netip.Prefix{}, fmt.Errorf("calico manifest: CALICO_IPV4POOL_CIDR without a value on the next line")
		}
		p, err := netip.ParsePrefix(strings.Trim(strings.TrimSpace(v), `"'`))
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("calico manifest: CALICO_IPV4POOL_CIDR: %w", err)
		}
		return p, nil
	}
	return netip.MustParsePrefix(DefaultPoolCIDR), nil
}

// CheckPodSubnet: the manifest is applied unchanged, so calico-node's pool
// is pool; the nodes' podCIDRs come from the kind config's podSubnet
// (podSubnet "" is svclab's default, defaultSubnet). They must agree.
func CheckPodSubnet(podSubnet, defaultSubnet string, pool netip.Prefix) error {
	if podSubnet == "" {
		podSubnet = defaultSubnet
	}
	p, err := netip.ParsePrefix(podSubnet)
	if err != nil {
		return fmt.Errorf("networking.podSubnet %q: %w", podSubnet, err)
	}
	if p != pool {
		return fmt.Errorf("networking.podSubnet %s: --cni calico applies upstream's manifest unchanged, whose IPv4 pool (CALICO_IPV4POOL_CIDR) is %s; set podSubnet: %s in the config", p, pool, pool)
	}
	return nil
}
