package kit

import (
	"fmt"
	"strings"
)

// The kinds of Service proxy a target can have (Proxy.Kind).
const (
	// ProxyKubeProxy is upstream's kube-proxy.
	ProxyKubeProxy = "kube-proxy"
	// ProxySvclab is svclab's embedded proxy (`svclab proxy`), which writes
	// upstream's rules.
	ProxySvclab = "svclab"
	// ProxyOther is anything else (e.g. Cilium's kube-proxy replacement),
	// or no proxy found at all.
	ProxyOther = "other"
)

// Proxy is what proxies Services on a target, as found there (not
// assumed): which program, where it runs, its mode and its configuration,
// each with where it was read from.
type Proxy struct {
	// Kind is ProxyKubeProxy, ProxySvclab or ProxyOther.
	Kind string
	// Where says where it runs ("DaemonSet kube-system/kube-proxy"), or,
	// for ProxyOther, what was found instead.
	Where string
	// Mode is iptables, nftables or ipvs ("" when unknown); ModeFrom says
	// where it was read ("/proxyMode on node kind-worker", "config.conf of
	// ConfigMap kube-system/kube-proxy", "the node's tables: …").
	Mode, ModeFrom string
	// Config is the configuration in force; ConfigFrom where it came from
	// ("ConfigMap kube-system/kube-proxy, key config.conf, mounted for
	// --config", "the pods' flags", "upstream's defaults").
	Config     ProxyConfig
	ConfigFrom string
	// ConfigMap is "namespace/name" of the ConfigMap holding the
	// configuration, when one does: the one a mode switch edits.
	ConfigMap string
	// Metrics says whether the nodes' proxy answers on :10249/metrics with
	// kube-proxy's sync metrics.
	Metrics bool
}

// ProxyConfig is the part of a KubeProxyConfiguration (and of kube-proxy's
// flags) the expected rules and behaviour depend on, with upstream's
// defaults applied.
type ProxyConfig struct {
	// MasqueradeAll SNATs every connection to a cluster IP (the mode's
	// section: nftables.masqueradeAll in nftables mode, else
	// iptables.masqueradeAll; --masquerade-all).
	MasqueradeAll bool
	// ClusterCIDRs are clusterCIDR split at commas (--cluster-cidr).
	ClusterCIDRs []string
	// DetectLocalMode tells a pod's traffic from other traffic:
	// ClusterCIDR (upstream's default), NodeCIDR, BridgeInterface or
	// InterfaceNamePrefix.
	DetectLocalMode string
	// InterfaceNamePrefix (detectLocal.interfaceNamePrefix,
	// --pod-interface-name-prefix) and BridgeInterface
	// (detectLocal.bridgeInterface, --pod-bridge-interface) are the
	// interface modes' settings.
	InterfaceNamePrefix, BridgeInterface string
	// LocalhostNodePorts is iptables.localhostNodePorts (default true):
	// node ports also answer on 127.0.0.1 in iptables mode.
	LocalhostNodePorts bool
}

// The detectLocalMode values (upstream's LocalMode*).
const (
	DetectLocalClusterCIDR         = "ClusterCIDR"
	DetectLocalNodeCIDR            = "NodeCIDR"
	DetectLocalBridgeInterface     = "BridgeInterface"
	DetectLocalInterfaceNamePrefix = "InterfaceNamePrefix"
)

// DefaultProxyConfig is upstream's defaults (v1.36): no masqueradeAll, no
// cluster CIDR, detectLocalMode ClusterCIDR, localhost node ports on.
func DefaultProxyConfig() ProxyConfig {
	return ProxyConfig{DetectLocalMode: DetectLocalClusterCIDR, LocalhostNodePorts: true}
}

// WritesKubeProxyRules says whether the proxy writes upstream kube-proxy's
// rules (chains, nft table, /proxyMode): kube-proxy itself, or svclab's.
func (p Proxy) WritesKubeProxyRules() bool {
	return p.Kind == ProxyKubeProxy || p.Kind == ProxySvclab
}

// NotKubeProxyReason is why the specs that check kube-proxy's internals
// skip on this target ("" when they run).
func (p Proxy) NotKubeProxyReason() string {
	if p.WritesKubeProxyRules() {
		return ""
	}
	return fmt.Sprintf("the Service proxy is not kube-proxy (found: %s): kube-proxy's rules are not checked", p.Where)
}

// String is the facts on a few lines, for logs and --dry-run.
func (p Proxy) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "proxy:  %s (%s)\n", p.Kind, p.Where)
	mode := p.Mode
	if mode == "" {
		mode = "unknown"
	}
	fmt.Fprintf(&b, "mode:   %s (from %s)\n", mode, p.ModeFrom)
	fmt.Fprintf(&b, "config: %s (from %s)\n", p.Config, p.ConfigFrom)
	if p.ConfigMap != "" {
		fmt.Fprintf(&b, "ConfigMap: %s\n", p.ConfigMap)
	}
	return b.String()
}

// String is the configuration in one line.
func (c ProxyConfig) String() string {
	parts := []string{fmt.Sprintf("masqueradeAll=%t", c.MasqueradeAll)}
	cidrs := strings.Join(c.ClusterCIDRs, ",")
	if cidrs == "" {
		cidrs = `""`
	}
	parts = append(parts, "clusterCIDR="+cidrs, "detectLocalMode="+c.DetectLocalMode)
	switch c.DetectLocalMode {
	case DetectLocalInterfaceNamePrefix:
		parts = append(parts, "interfaceNamePrefix="+c.InterfaceNamePrefix)
	case DetectLocalBridgeInterface:
		parts = append(parts, "bridgeInterface="+c.BridgeInterface)
	}
	parts = append(parts, fmt.Sprintf("localhostNodePorts=%t", c.LocalhostNodePorts))
	return strings.Join(parts, " ")
}
