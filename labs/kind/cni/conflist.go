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
// podCIDR.
func Conflist(variant string, podCIDR netip.Prefix) ([]byte, error) {
	// No ipam routes: the bridge plugin's isDefaultGateway adds the
	// default route (both would collide: "file exists"), and the Calico
	// variant's plugin adds its own.
	ipam := map[string]any{
		"type":    "host-local",
		"ranges":  [][]map[string]string{{{"subnet": podCIDR.Masked().String()}}},
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
