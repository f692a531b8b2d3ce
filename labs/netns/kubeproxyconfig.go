package netns

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/labs/netns/topology"
)

// kubeProxyConfigMap is the kube-system/kube-proxy ConfigMap a new lab
// starts with, shaped like the one kubeadm writes: config.conf holds a
// KubeProxyConfiguration whose unset fields are written as kubeadm writes
// them ("", null, 0s) and so take upstream's defaults — mode "" is iptables
// (as seed 001 shows it), metricsBindAddress "" is 127.0.0.1:10249 (seed
// 002's curl of localhost:10249 inside the node), localhostNodePorts null
// is true (node ports answer on 127.0.0.1, with route_localnet=1 in the
// node's namespace). clusterCIDR is the lab's pod subnet, as kubeadm's is
// the cluster's. The one deliberate difference from upstream is written
// out with a comment saying so.
func kubeProxyConfigMap(t *topology.Lab) *corev1.ConfigMap {
	mode := string(t.Spec.Proxy.Mode)
	if mode == string(topology.ProxyModeIPTables) {
		mode = ""
	}
	conf := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
bindAddress: 0.0.0.0
clusterCIDR: %s
healthzBindAddress: ""
metricsBindAddress: ""
mode: %q
nodePortAddresses: null
iptables:
  localhostNodePorts: null
  masqueradeAll: false
  masqueradeBit: null
  # svclab lab, not upstream: 100ms instead of the default 1s, so that a
  # change applied to the lab is programmed at once.
  minSyncPeriod: 100ms
  syncPeriod: 0s
ipvs:
  scheduler: ""
nftables:
  masqueradeAll: false
  masqueradeBit: null
  # svclab lab, not upstream: as iptables.minSyncPeriod above.
  minSyncPeriod: 100ms
  syncPeriod: 0s
`, clusterCIDR(t), mode)
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy", Labels: map[string]string{"app": "kube-proxy"}},
		Data:       map[string]string{"config.conf": conf},
	}
}

// clusterCIDR is kube-proxy's clusterCIDR as kubeadm writes it: the pod
// subnet, or a dual-stack lab's pod subnets joined by a comma, the
// primary first ("10.244.0.0/16,fd00:10:244::/56").
func clusterCIDR(t *topology.Lab) string {
	if len(t.Spec.PodSubnets) < 2 {
		return t.Spec.PodSubnet.String()
	}
	parts := make([]string, len(t.Spec.PodSubnets))
	for i, p := range t.Spec.PodSubnets {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}
