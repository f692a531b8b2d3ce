package conformance

import (
	"strings"
	"testing"

	"github.com/svclab/svclab/scenarios/kit"
)

func TestSkipReason(t *testing.T) {
	kubeProxy := kit.Proxy{Kind: kit.ProxyKubeProxy, Where: "DaemonSet kube-system/kube-proxy", ConfigMap: "kube-system/kube-proxy"}
	svclabNoConfigMap := kit.Proxy{Kind: kit.ProxySvclab, Where: "DaemonSet net/edge-proxy", ConfigFrom: "upstream's defaults (no --config)"}
	cilium := kit.Proxy{Kind: kit.ProxyOther, Where: "no DaemonSet runs kube-proxy or `svclab proxy`; DaemonSet kube-system/cilium (quay.io/cilium/cilium:v1.16.5)"}
	modeSwitch := []string{LabelDisruptive, LabelModeSwitch}
	tests := []struct {
		name   string
		labels []string
		facts  Facts
		want   string // "" runs; else a part of the reason
	}{
		{"behaviour spec on Cilium", []string{"distribution"}, Facts{Proxy: cilium}, ""},
		{"internals on kube-proxy", []string{"distribution", LabelKubeProxyInternals}, Facts{Proxy: kubeProxy}, ""},
		{"internals on svclab's proxy", []string{LabelKubeProxyInternals}, Facts{Proxy: svclabNoConfigMap}, ""},
		{"internals on Cilium", []string{LabelKubeProxyInternals}, Facts{Proxy: cilium},
			"the Service proxy is not kube-proxy (found: no DaemonSet runs kube-proxy or `svclab proxy`; DaemonSet kube-system/cilium (quay.io/cilium/cilium:v1.16.5)): kube-proxy's rules are not checked"},
		{"mode switch without --disruptive", modeSwitch, Facts{Proxy: kubeProxy}, DisruptiveReason},
		{"mode switch with --disruptive", modeSwitch, Facts{Proxy: kubeProxy, Disruptive: true}, ""},
		{"mode switch on Cilium", modeSwitch, Facts{Proxy: cilium, Disruptive: true}, "the Service proxy is not kube-proxy (found: "},
		{"mode switch without a ConfigMap", modeSwitch, Facts{Proxy: svclabNoConfigMap, Disruptive: true},
			"the proxy keeps its configuration in no ConfigMap (upstream's defaults (no --config)): the mode switch has none to edit"},
		{"Disruptive is said first", modeSwitch, Facts{Proxy: cilium}, DisruptiveReason},
		{"cross-node on one node", []string{LabelCrossNode}, Facts{Proxy: kubeProxy, Nodes: 1}, "cross-node: needs 2 nodes the scenarios can use, the cluster has 1"},
		{"cross-node on two nodes", []string{LabelCrossNode}, Facts{Proxy: kubeProxy, Nodes: 2}, ""},
		{"cross-node, nodes unknown", []string{LabelCrossNode}, Facts{Proxy: kubeProxy}, ""},
	}
	for _, tt := range tests {
		got := SkipReason(tt.labels, tt.facts)
		switch {
		case tt.want == "" && got != "":
			t.Errorf("%s: skips (%s), want it to run", tt.name, got)
		case tt.want != "" && !strings.Contains(got, tt.want):
			t.Errorf("%s: reason %q, want it to say %q", tt.name, got, tt.want)
		}
	}
}

func TestNeedsProxy(t *testing.T) {
	if needsProxy([]string{"distribution", LabelCrossNode, LabelDisruptive}) {
		t.Error("labels that need no proxy facts: needsProxy says they do")
	}
	if !needsProxy([]string{LabelKubeProxyInternals}) || !needsProxy([]string{LabelModeSwitch}) {
		t.Error("the proxy's labels: needsProxy says they need no facts")
	}
}
