package kit

import (
	"reflect"
	"strings"
	"testing"
)

func TestDecodeProxyConfig(t *testing.T) {
	const header = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
	tests := []struct {
		name string
		doc  string
		want ProxyConfig
		mode string
	}{
		{"kubeadm's, mode unset", header + "mode: \"\"\nclusterCIDR: 10.244.0.0/16\niptables:\n  masqueradeAll: false\n  localhostNodePorts: null\n",
			ProxyConfig{ClusterCIDRs: []string{"10.244.0.0/16"}, DetectLocalMode: DetectLocalClusterCIDR, LocalhostNodePorts: true}, "iptables"},
		{"masqueradeAll and InterfaceNamePrefix", header + "mode: iptables\nclusterCIDR: 10.244.0.0/16\ndetectLocalMode: InterfaceNamePrefix\n" +
			"detectLocal:\n  interfaceNamePrefix: veth\niptables:\n  masqueradeAll: true\n",
			ProxyConfig{MasqueradeAll: true, ClusterCIDRs: []string{"10.244.0.0/16"}, DetectLocalMode: DetectLocalInterfaceNamePrefix,
				InterfaceNamePrefix: "veth", LocalhostNodePorts: true}, "iptables"},
		{"nftables takes nftables.masqueradeAll", header + "mode: nftables\niptables: {masqueradeAll: true}\nnftables: {masqueradeAll: false}\n",
			ProxyConfig{DetectLocalMode: DetectLocalClusterCIDR, LocalhostNodePorts: true}, "nftables"},
		{"nftables masqueradeAll", header + "mode: nftables\nnftables: {masqueradeAll: true}\n",
			ProxyConfig{MasqueradeAll: true, DetectLocalMode: DetectLocalClusterCIDR, LocalhostNodePorts: true}, "nftables"},
		{"dual stack, bridge, no localhost node ports", header + "clusterCIDR: \"10.244.0.0/16, fd00::/56\"\ndetectLocalMode: BridgeInterface\n" +
			"detectLocal: {bridgeInterface: cni0}\niptables: {localhostNodePorts: false}\n",
			ProxyConfig{ClusterCIDRs: []string{"10.244.0.0/16", "fd00::/56"}, DetectLocalMode: DetectLocalBridgeInterface, BridgeInterface: "cni0"}, "iptables"},
		{"a field from a newer version is ignored", header + "mode: ipvs\nsomethingNew: {a: 1}\n",
			ProxyConfig{DetectLocalMode: DetectLocalClusterCIDR, LocalhostNodePorts: true}, "ipvs"},
	}
	for _, tt := range tests {
		got, mode, err := DecodeProxyConfig([]byte(tt.doc))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) || mode != tt.mode {
			t.Errorf("%s: got %+v mode %q, want %+v mode %q", tt.name, got, mode, tt.want, tt.mode)
		}
	}
	for _, bad := range []struct{ doc, want string }{
		{"mode: [iptables\n", "not a KubeProxyConfiguration"},
		{"apiVersion: v1\nkind: ConfigMap\n", `kind "ConfigMap", not KubeProxyConfiguration`},
	} {
		if _, _, err := DecodeProxyConfig([]byte(bad.doc)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want it to say %q", bad.doc, err, bad.want)
		}
	}
}

func TestNotKubeProxyReason(t *testing.T) {
	for _, kind := range []string{ProxyKubeProxy, ProxySvclab} {
		if r := (Proxy{Kind: kind}).NotKubeProxyReason(); r != "" {
			t.Errorf("%s: %q, want no reason", kind, r)
		}
	}
	want := "the Service proxy is not kube-proxy (found: DaemonSet kube-system/cilium): kube-proxy's rules are not checked"
	if r := (Proxy{Kind: ProxyOther, Where: "DaemonSet kube-system/cilium"}).NotKubeProxyReason(); r != want {
		t.Errorf("other: %q, want %q", r, want)
	}
}
