package kube

import (
	"context"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/svclab/svclab/scenarios/kit"
)

const kubeProxyConfHeader = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"

// daemonSet is a DaemonSet of one container, scheduled on nodes nodes.
func daemonSet(ns, name string, labels map[string]string, c corev1.Container, volumes []corev1.Volume, nodes int32) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{c}, Volumes: volumes},
		}},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: nodes},
	}
}

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func configMapVolume(name, cm string, items ...corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Items: items}}}
}

// kubeadmKubeProxy is kubeadm's kube-proxy DaemonSet (cmd/kubeadm's
// manifest): --config in the ConfigMap kube-proxy mounted at
// /var/lib/kube-proxy.
func kubeadmKubeProxy() *appsv1.DaemonSet {
	return daemonSet("kube-system", "kube-proxy", map[string]string{"k8s-app": "kube-proxy"}, corev1.Container{
		Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.36.0",
		Command:      []string{"/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"},
		VolumeMounts: []corev1.VolumeMount{{Name: "kube-proxy", MountPath: "/var/lib/kube-proxy"}, {Name: "lib-modules", MountPath: "/lib/modules"}},
	}, []corev1.Volume{configMapVolume("kube-proxy", "kube-proxy"), {Name: "lib-modules"}}, 3)
}

// noise are DaemonSets every cluster has that are not the proxy:
// kube-proxy's Windows DaemonSet among them.
func noise() []runtime.Object {
	windows := daemonSet("kube-system", "kube-proxy-windows", map[string]string{"k8s-app": "kube-proxy"},
		corev1.Container{Name: "kube-proxy", Image: "sigwindowstools/kube-proxy:v1.36.0"}, nil, 0)
	windows.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelOSStable: "windows"}
	return []runtime.Object{
		daemonSet("kube-system", "kindnet", map[string]string{"app": "kindnet"}, corev1.Container{Name: "kindnet-cni", Image: "docker.io/kindest/kindnetd:v20250512"}, nil, 3),
		windows,
	}
}

func TestDiscover(t *testing.T) {
	tests := []struct {
		name    string
		objects []runtime.Object
		named   string // --proxy-config
		want    kit.Proxy
	}{{
		name: "kubeadm's kube-proxy",
		objects: append(noise(), kubeadmKubeProxy(), configMap("kube-system", "kube-proxy", map[string]string{
			"config.conf": kubeProxyConfHeader + "mode: \"\"\nclusterCIDR: 10.244.0.0/16\niptables:\n  masqueradeAll: false\n", "kubeconfig.conf": "…"})),
		want: kit.Proxy{Kind: kit.ProxyKubeProxy, Where: "DaemonSet kube-system/kube-proxy", Mode: "iptables",
			Config:     kit.ProxyConfig{ClusterCIDRs: []string{"10.244.0.0/16"}, DetectLocalMode: "ClusterCIDR", LocalhostNodePorts: true},
			ConfigFrom: "ConfigMap kube-system/kube-proxy, key config.conf (mounted at /var/lib/kube-proxy/config.conf for --config)",
			ConfigMap:  "kube-system/kube-proxy"},
	}, {
		name: "kube-proxy with masqueradeAll and detectLocalMode InterfaceNamePrefix",
		objects: append(noise(), kubeadmKubeProxy(), configMap("kube-system", "kube-proxy", map[string]string{
			"config.conf": kubeProxyConfHeader + "mode: iptables\nclusterCIDR: 10.244.0.0/16\ndetectLocalMode: InterfaceNamePrefix\n" +
				"detectLocal:\n  interfaceNamePrefix: veth\niptables:\n  masqueradeAll: true\n"})),
		want: kit.Proxy{Kind: kit.ProxyKubeProxy, Where: "DaemonSet kube-system/kube-proxy", Mode: "iptables",
			Config: kit.ProxyConfig{MasqueradeAll: true, ClusterCIDRs: []string{"10.244.0.0/16"}, DetectLocalMode: "InterfaceNamePrefix",
				InterfaceNamePrefix: "veth", LocalhostNodePorts: true},
			ConfigFrom: "ConfigMap kube-system/kube-proxy, key config.conf (mounted at /var/lib/kube-proxy/config.conf for --config)",
			ConfigMap:  "kube-system/kube-proxy"},
	}, {
		name: "kube-proxy in nftables mode, another name and namespace, a shell, the ConfigMap's key mapped to the file",
		objects: append(noise(),
			daemonSet("network", "proxy", map[string]string{"app": "proxy"}, corev1.Container{
				Name: "proxy", Image: "registry.example/k8s/kube-proxy@sha256:0123",
				Command:      []string{"/bin/sh", "-c", "exec kube-proxy --config /etc/kp/config.conf --v=2"},
				VolumeMounts: []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/kp/"}},
			}, []corev1.Volume{configMapVolume("conf", "proxy-settings", corev1.KeyToPath{Key: "kubeproxy", Path: "config.conf"})}, 2),
			configMap("network", "proxy-settings", map[string]string{"kubeproxy": kubeProxyConfHeader + "mode: nftables\nclusterCIDR: 10.0.0.0/12\n" +
				"iptables: {masqueradeAll: true}\nnftables: {masqueradeAll: false}\n"})),
		want: kit.Proxy{Kind: kit.ProxyKubeProxy, Where: "DaemonSet network/proxy", Mode: "nftables",
			Config:     kit.ProxyConfig{ClusterCIDRs: []string{"10.0.0.0/12"}, DetectLocalMode: "ClusterCIDR", LocalhostNodePorts: true},
			ConfigFrom: "ConfigMap network/proxy-settings, key kubeproxy (mounted at /etc/kp/config.conf for --config)",
			ConfigMap:  "network/proxy-settings"},
	}, {
		name: "kube-proxy without --config: its flags",
		objects: append(noise(), daemonSet("kube-system", "kube-proxy", map[string]string{"k8s-app": "kube-proxy"}, corev1.Container{
			Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.36.0",
			Command: []string{"kube-proxy", "--proxy-mode=ipvs", "--masquerade-all", "--cluster-cidr", "10.244.0.0/16",
				"--detect-local-mode=BridgeInterface", "--pod-bridge-interface=cni0", "--iptables-localhost-nodeports=false"},
		}, nil, 3)),
		want: kit.Proxy{Kind: kit.ProxyKubeProxy, Where: "DaemonSet kube-system/kube-proxy", Mode: "ipvs",
			Config: kit.ProxyConfig{MasqueradeAll: true, ClusterCIDRs: []string{"10.244.0.0/16"}, DetectLocalMode: "BridgeInterface",
				BridgeInterface: "cni0"},
			ConfigFrom: "the pods' flags --proxy-mode=ipvs --masquerade-all=true --cluster-cidr=10.244.0.0/16 --detect-local-mode=BridgeInterface " +
				"--pod-bridge-interface=cni0 --iptables-localhost-nodeports=false over upstream's defaults"},
	}, {
		name: "another ConfigMap named with --proxy-config",
		objects: append(noise(), daemonSet("kube-system", "kube-proxy", map[string]string{"k8s-app": "kube-proxy"}, corev1.Container{
			Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.36.0", Command: []string{"kube-proxy", "--config=/host/etc/kube-proxy.yaml"},
		}, nil, 3), configMap("ops", "kp", map[string]string{"settings.yaml": kubeProxyConfHeader + "mode: nftables\nnftables: {masqueradeAll: true}\n"})),
		named: "ops/kp",
		want: kit.Proxy{Kind: kit.ProxyKubeProxy, Where: "DaemonSet kube-system/kube-proxy", Mode: "nftables",
			Config:     kit.ProxyConfig{MasqueradeAll: true, DetectLocalMode: "ClusterCIDR", LocalhostNodePorts: true},
			ConfigFrom: "ConfigMap ops/kp, key settings.yaml (--proxy-config)", ConfigMap: "ops/kp"},
	}, {
		name: "no kube-proxy: svclab's proxy under another name, without a ConfigMap",
		objects: append(noise()[:1], daemonSet("net", "edge-proxy", map[string]string{"app": "edge"}, corev1.Container{
			Name: "edge", Image: "registry.example/svclab/svclab@sha256:89ab", Args: []string{"proxy", "--node=$(NODE_NAME)"},
		}, nil, 2)),
		want: kit.Proxy{Kind: kit.ProxyOther,
			Where:    "DaemonSet net/edge-proxy: svclab's proxy, not in kube-proxy's place (no label k8s-app=kube-proxy), so checked as any Service proxy",
			ModeFrom: "not kube-proxy: no mode read", Config: kit.DefaultProxyConfig(), ConfigFrom: "not kube-proxy: no configuration read"},
	}, {
		name: "svclab's proxy as svclab's kind clusters run it (labelled k8s-app=kube-proxy, reading kube-system/kube-proxy)",
		objects: append(noise(), daemonSet("kube-system", "svclab-proxy", map[string]string{"k8s-app": "kube-proxy"}, corev1.Container{
			Name: "svclab-proxy", Image: "svclab/svclab-proxy:dev", Args: []string{"proxy", "--node=$(NODE_NAME)"},
		}, nil, 3), configMap("kube-system", "kube-proxy", map[string]string{"config.conf": kubeProxyConfHeader + "mode: iptables\nclusterCIDR: 10.244.0.0/16\n"})),
		want: kit.Proxy{Kind: kit.ProxySvclab, Where: "DaemonSet kube-system/svclab-proxy", Mode: "iptables",
			Config:     kit.ProxyConfig{ClusterCIDRs: []string{"10.244.0.0/16"}, DetectLocalMode: "ClusterCIDR", LocalhostNodePorts: true},
			ConfigFrom: "ConfigMap kube-system/kube-proxy, key config.conf (read by svclab proxy through the API)", ConfigMap: "kube-system/kube-proxy"},
	}, {
		name: "kube-proxy as static pods",
		objects: append(noise()[:1], &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy-node1", Labels: map[string]string{"component": "kube-proxy"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.36.0",
				Command: []string{"kube-proxy", "--cluster-cidr=10.42.0.0/16"}}}},
		}),
		want: kit.Proxy{Kind: kit.ProxyKubeProxy, Where: "pods kube-system/kube-proxy-node1, not from a DaemonSet", Mode: "iptables",
			Config:     kit.ProxyConfig{ClusterCIDRs: []string{"10.42.0.0/16"}, DetectLocalMode: "ClusterCIDR", LocalhostNodePorts: true},
			ConfigFrom: "the pods' flags --cluster-cidr=10.42.0.0/16 over upstream's defaults"},
	}, {
		name: "Cilium's kube-proxy replacement: nothing that is kube-proxy",
		objects: []runtime.Object{
			daemonSet("kube-system", "cilium", map[string]string{"k8s-app": "cilium"}, corev1.Container{Name: "cilium-agent", Image: "quay.io/cilium/cilium:v1.16.5",
				Command: []string{"cilium-agent"}}, nil, 3),
			daemonSet("kube-system", "cilium-envoy", map[string]string{"k8s-app": "cilium-envoy"}, corev1.Container{Name: "envoy", Image: "quay.io/cilium/cilium-envoy:v1.30"}, nil, 3),
			configMap("kube-system", "cilium-config", map[string]string{"kube-proxy-replacement": "true"}),
		},
		want: kit.Proxy{Kind: kit.ProxyOther,
			Where: "no DaemonSet runs kube-proxy or `svclab proxy`; DaemonSet kube-system/cilium (quay.io/cilium/cilium:v1.16.5): Cilium's kube-proxy replacement " +
				"(cilium-config kube-proxy-replacement=true), DaemonSet kube-system/cilium-envoy (quay.io/cilium/cilium-envoy:v1.30)",
			ModeFrom: "not kube-proxy: no mode read", Config: kit.DefaultProxyConfig(), ConfigFrom: "not kube-proxy: no configuration read"},
	}}
	for _, tt := range tests {
		d, err := Discover(context.Background(), fake.NewClientset(tt.objects...), tt.named)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := d.Proxy
		got.ModeFrom = tt.want.ModeFrom // checked below
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tt.name, got, tt.want)
		}
		if d.Proxy.ModeFrom == "" {
			t.Errorf("%s: no ModeFrom", tt.name)
		}
		if (d.DaemonSet == nil) != (tt.want.Kind == kit.ProxyOther || strings.HasPrefix(tt.want.Where, "pods ")) {
			t.Errorf("%s: DaemonSet %v for %q", tt.name, d.DaemonSet, tt.want.Where)
		}
	}
}

// TestDiscoverErrors: a ConfigMap that is named or mounted but cannot be
// read is an error naming it, not a guess.
func TestDiscoverErrors(t *testing.T) {
	tests := []struct {
		name    string
		objects []runtime.Object
		named   string
		want    string
	}{
		{"the mounted ConfigMap is missing", []runtime.Object{kubeadmKubeProxy()}, "",
			`the proxy's ConfigMap kube-system/kube-proxy (mounted at /var/lib/kube-proxy/config.conf for --config): configmaps "kube-proxy" not found`},
		{"the named ConfigMap is missing", []runtime.Object{kubeadmKubeProxy()}, "ops/kp",
			`the proxy's ConfigMap ops/kp (--proxy-config): configmaps "kp" not found`},
		{"--proxy-config is not NS/NAME", []runtime.Object{kubeadmKubeProxy()}, "kp", `proxy config "kp": want NAMESPACE/NAME`},
		{"config.conf is not a KubeProxyConfiguration", []runtime.Object{kubeadmKubeProxy(),
			configMap("kube-system", "kube-proxy", map[string]string{"config.conf": "mode: [iptables\n"})}, "",
			"the proxy's ConfigMap kube-system/kube-proxy, key config.conf: not a KubeProxyConfiguration"},
	}
	for _, tt := range tests {
		_, err := Discover(context.Background(), fake.NewClientset(tt.objects...), tt.named)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to say %q", tt.name, err, tt.want)
		}
	}
}

func TestFlags(t *testing.T) {
	words := []string{"kube-proxy", "--proxy-mode", "nftables", "-cluster-cidr=10.0.0.0/8", "--masquerade-all=false", "--v=2", "--iptables-localhost-nodeports"}
	if v, ok := flagValue(words, "proxy-mode"); !ok || v != "nftables" {
		t.Errorf("--proxy-mode nftables: %q %t", v, ok)
	}
	if v, ok := flagValue(words, "cluster-cidr"); !ok || v != "10.0.0.0/8" {
		t.Errorf("-cluster-cidr=…: %q %t", v, ok)
	}
	if _, ok := flagValue(words, "config"); ok {
		t.Error("--config: found, but it is not there")
	}
	if v, ok := boolFlag(words, "masquerade-all"); !ok || v {
		t.Errorf("--masquerade-all=false: %t %t", v, ok)
	}
	if v, ok := boolFlag(words, "iptables-localhost-nodeports"); !ok || !v {
		t.Errorf("--iptables-localhost-nodeports: %t %t", v, ok)
	}
	if imageName("registry.example:5000/k8s/kube-proxy:v1.36.0@sha256:00") != "kube-proxy" {
		t.Errorf("imageName: %q", imageName("registry.example:5000/k8s/kube-proxy:v1.36.0@sha256:00"))
	}
}
