package cni

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/proxy/config"
)

// TestProxyManifestConfigIsUpstreamDefaults: the kube-system/kube-proxy
// ConfigMap svclab's DaemonSet reads on a kind cluster parses, and keeps
// upstream's defaults where nothing on kind needs otherwise: metrics on
// 127.0.0.1:10249 (the DaemonSet has no probes) and node ports on
// localhost. The one difference, conntrack.maxPerCore, is commented.
func TestProxyManifestConfigIsUpstreamDefaults(t *testing.T) {
	pm, err := ProxyManifest(ManifestParams{ProxyImage: "svclab/svclab:dev", ClusterCIDR: "10.244.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	var cm *corev1.ConfigMap
	for _, doc := range strings.Split(pm, "\n---\n") {
		var c corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(doc), &c); err == nil && c.Kind == "ConfigMap" && c.Name == config.ConfigMapName {
			cm = &c
		}
	}
	if cm == nil {
		t.Fatalf("no kube-proxy ConfigMap in\n%s", pm)
	}
	c, err := config.FromConfigMap(cm)
	if err != nil {
		t.Fatal(err)
	}
	if c.MetricsBindAddress != "127.0.0.1:10249" || c.HealthzBindAddress != "0.0.0.0:10256" || !c.IPv4LocalhostNodePorts() {
		t.Errorf("metrics %s, healthz %s, localhost node ports %v; want upstream's defaults", c.MetricsBindAddress, c.HealthzBindAddress, c.IPv4LocalhostNodePorts())
	}
	if text := cm.Data[config.ConfigMapKey]; *c.Versioned.Conntrack.MaxPerCore != 0 || !strings.Contains(text, "# Not upstream's default (32768)") {
		t.Errorf("conntrack.maxPerCore %d, and the ConfigMap must say why it is not upstream's:\n%s", *c.Versioned.Conntrack.MaxPerCore, text)
	}
}
