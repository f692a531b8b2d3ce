package kit

import (
	"fmt"
	"strings"

	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"sigs.k8s.io/yaml"
)

// DefaultProxyMode is the mode of a configuration that names none:
// upstream's default on Linux (v1.36).
const DefaultProxyMode = "iptables"

// DecodeProxyConfig reads a KubeProxyConfiguration document (a ConfigMap's
// config.conf) into the ProxyConfig in force and the mode it names
// (DefaultProxyMode when it names none), with upstream's defaults and its
// v1alpha1 conversion: masqueradeAll is the mode's section's (nftables in
// nftables mode, iptables otherwise), an unset detectLocalMode is
// ClusterCIDR, an unset localhostNodePorts is true.
//
// Decoding is lenient, unlike svclab's own proxy (proxy/config): a field
// this version does not know is ignored, so that a newer cluster's
// configuration is still read for what the expectations need.
func DecodeProxyConfig(data []byte) (ProxyConfig, string, error) {
	var kp kubeproxyconfigv1alpha1.KubeProxyConfiguration
	if err := yaml.Unmarshal(data, &kp); err != nil {
		return ProxyConfig{}, "", fmt.Errorf("not a KubeProxyConfiguration: %w", err)
	}
	if kp.Kind != "" && kp.Kind != "KubeProxyConfiguration" {
		return ProxyConfig{}, "", fmt.Errorf("kind %q, not KubeProxyConfiguration", kp.Kind)
	}
	mode := string(kp.Mode)
	if mode == "" {
		mode = DefaultProxyMode
	}
	cfg := DefaultProxyConfig()
	cfg.MasqueradeAll = kp.IPTables.MasqueradeAll
	if mode == "nftables" {
		cfg.MasqueradeAll = kp.NFTables.MasqueradeAll
	}
	cfg.ClusterCIDRs = SplitCIDRs(kp.ClusterCIDR)
	if kp.DetectLocalMode != "" {
		cfg.DetectLocalMode = string(kp.DetectLocalMode)
	}
	cfg.InterfaceNamePrefix = kp.DetectLocal.InterfaceNamePrefix
	cfg.BridgeInterface = kp.DetectLocal.BridgeInterface
	if kp.IPTables.LocalhostNodePorts != nil {
		cfg.LocalhostNodePorts = *kp.IPTables.LocalhostNodePorts
	}
	return cfg, mode, nil
}

// SplitCIDRs splits a clusterCIDR value at commas, dropping empty parts.
func SplitCIDRs(s string) []string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}
