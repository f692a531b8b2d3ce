package netns

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/proxy/config"
)

// TestKubeProxyConfigMapIsUpstreamDefaults: a new lab's ConfigMap reads as
// upstream's defaults in the lab's mode, except for the fields a lab sets
// on purpose — the cluster CIDR, and what the ConfigMap's text marks
// "svclab lab, not upstream".
func TestKubeProxyConfigMapIsUpstreamDefaults(t *testing.T) {
	for _, mode := range topology.ProxyModes() {
		lab := &topology.Lab{Spec: topology.Spec{PodSubnet: netip.MustParsePrefix("10.244.0.0/16"), Proxy: topology.Proxy{Mode: mode}}}
		cm := kubeProxyConfigMap(lab)
		got, err := config.FromConfigMap(cm)
		if err != nil {
			t.Fatalf("mode %s: %v", mode, err)
		}
		if string(got.Mode) != string(mode) || len(got.ClusterCIDRs) != 1 || got.ClusterCIDRs[0] != lab.Spec.PodSubnet {
			t.Errorf("mode %s: mode %q, cluster CIDRs %v", mode, got.Mode, got.ClusterCIDRs)
		}
		if got.MetricsBindAddress != "127.0.0.1:10249" || !got.IPv4LocalhostNodePorts() {
			t.Errorf("mode %s: metrics on %s, localhost node ports %v; want upstream's 127.0.0.1:10249 and true",
				mode, got.MetricsBindAddress, got.IPv4LocalhostNodePorts())
		}

		want, err := config.Parse("want", []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: "+string(mode)+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		text := cm.Data[config.ConfigMapKey]
		deliberate := map[string]bool{}
		switch mode {
		case topology.ProxyModeIPTables:
			deliberate["MinSyncPeriod"] = true // iptables.minSyncPeriod
			if got.MinSyncPeriod != 100*time.Millisecond || !strings.Contains(text, "# svclab lab, not upstream: 100ms instead of the default 1s") {
				t.Errorf("minSyncPeriod %v without the comment that says it is the lab's own:\n%s", got.MinSyncPeriod, text)
			}
		case topology.ProxyModeNFTables:
			deliberate["MinSyncPeriod"] = true // nftables.minSyncPeriod
			if got.MinSyncPeriod != 100*time.Millisecond || !strings.Contains(text, "# svclab lab, not upstream: as iptables.minSyncPeriod above.") {
				t.Errorf("nftables minSyncPeriod %v without the comment that says it is the lab's own:\n%s", got.MinSyncPeriod, text)
			}
		}
		gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
		for i := range gv.NumField() {
			name := gv.Type().Field(i).Name
			switch name {
			case "Source", "Versioned", "Mode", "ClusterCIDRs":
				continue
			}
			if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) && !deliberate[name] {
				t.Errorf("mode %s: %s = %v, upstream's default is %v, and the ConfigMap does not say why", mode, name, gv.Field(i), wv.Field(i))
			}
		}
	}
}
