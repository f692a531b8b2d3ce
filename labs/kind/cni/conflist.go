package cni

import (
	"encoding/json"
	"fmt"
	"net/netip"
)

// ConfigPath is where the agent writes the node's CNI configuration.
const ConfigPath = "/etc/cni/net.d/10-svclab.conflist"

// PluginType is the calico variant's plugin name in /opt/cni/bin.
const PluginType = "svclab-cni"

// Conflist is the node's CNI configuration for a variant and the node's
// podCIDRs: one, or one per family (IPv4 first) on a dual-stack node —
// host-local then gives each pod an address of each range, and the
// bridge plugin cni0 the gateway of each (as flannel's CNI plugin
// delegates for FLANNEL_SUBNET and FLANNEL_IPV6_SUBNET).
func Conflist(variant string, podCIDRs ...netip.Prefix) ([]byte, error) {
	if len(podCIDRs) == 0 {
		return nil, fmt.Errorf("cni %q: no podCIDR", variant)
	}
	ranges := [][]map[string]string{}
	for _, p := range podCIDRs {
		ranges = append(ranges, []map[string]string{{"subnet": p.Masked().String()}})
	}
	// No ipam routes: the bridge plugin's isDefaultGateway adds the
	// default route (both would collide: "file exists"), and the Calico
	// variant's plugin adds its own.
	ipam := map[string]any{
		"type":    "host-local",
		"ranges":  ranges,
		"dataDir": "/var/lib/cni/networks",
	}
	var main map[string]any
	switch variant {
	case FlannelVXLAN:
		// flannel's CNI plugin delegates to exactly this bridge config.
		main = map[string]any{
			"type": "bridge", "bridge": "cni0", "isGateway": true, "isDefaultGateway": true,
			"ipMasq": false, "hairpinMode": true, "mtu": PodMTU, "ipam": ipam,
		}
	case CalicoProxyARP:
		main = map[string]any{"type": PluginType, "mtu": PodMTU, "ipam": ipam}
	default:
		return nil, fmt.Errorf("cni %q: want one of %v", variant, Variants)
	}
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "svclab-" + variant,
		"plugins": []any{
			main,
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	return json.MarshalIndent(conf, "", "  ")
}
