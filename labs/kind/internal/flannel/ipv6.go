package flannel

import (
	"fmt"
	"net/netip"
	"strings"
)

// DeviceIPv6Prefix is the start of the name of flanneld's IPv6 VXLAN
// device, "flannel-v6." and the VNI (pkg/backend/vxlan/vxlan.go:
// fmt.Sprintf("flannel-v6.%d", cfg.VNI)).
const DeviceIPv6Prefix = "flannel-v6."

// DeviceIPv6 is the IPv6 VXLAN device of a VNI.
func DeviceIPv6(vni int) string { return fmt.Sprintf("%s%d", DeviceIPv6Prefix, vni) }

// networkLine is net-conf.json's Network line as the manifest has it.
const networkLine = `      "Network": `

// WithIPv6 returns the manifest m with flannel's IPv6 settings in
// net-conf.json, as flannel's Documentation/configuration.md says for
// dual-stack ("EnableIPv6": true and "IPv6Network") and IPv6 alone (also
// "EnableIPv4": false): the lines go right after the Network line, which
// must be there once. ipv4 keeps IPv4 on (dual-stack).
func WithIPv6(m string, ipv6Network netip.Prefix, ipv4 bool) (string, error) {
	if !ipv6Network.IsValid() || ipv6Network.Addr().Is4() {
		return "", fmt.Errorf("flannel IPv6Network %s: want an IPv6 prefix", ipv6Network)
	}
	lines := strings.SplitAfter(m, "\n")
	var out strings.Builder
	found := 0
	for _, l := range lines {
		out.WriteString(l)
		if !strings.HasPrefix(l, networkLine) {
			continue
		}
		found++
		if !ipv4 {
			out.WriteString(`      "EnableIPv4": false,` + "\n")
		}
		out.WriteString(`      "EnableIPv6": true,` + "\n")
		fmt.Fprintf(&out, "      \"IPv6Network\": %q,\n", ipv6Network.Masked().String())
	}
	if found != 1 {
		return "", fmt.Errorf("manifest: want net-conf.json's Network line once, found it %d times", found)
	}
	return out.String(), nil
}
