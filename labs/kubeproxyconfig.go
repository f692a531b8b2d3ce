package labs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/labs/topology"
)

// kubeProxyConfigMap is the kube-system/kube-proxy ConfigMap a new lab
// starts with, shaped like the one kubeadm writes: config.conf holds a
// KubeProxyConfiguration whose mode is empty for iptables (the default, as
// seed 001 shows it) and clusterCIDR is the lab's pod subnet.
func kubeProxyConfigMap(t *topology.Lab) *corev1.ConfigMap {
	mode := string(t.Spec.Proxy.Mode)
	if mode == string(topology.ProxyModeIPTables) {
		mode = ""
	}
	conf := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
bindAddress: 0.0.0.0
clusterCIDR: %s
healthzBindAddress: 0.0.0.0:10256
metricsBindAddress: 0.0.0.0:10249
mode: %q
iptables:
  masqueradeAll: false
  masqueradeBit: 14
  minSyncPeriod: 100ms
  syncPeriod: 30s
ipvs:
  scheduler: ""
`, t.Spec.PodSubnet, mode)
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy", Labels: map[string]string{"app": "kube-proxy"}},
		Data:       map[string]string{"config.conf": conf},
	}
}
