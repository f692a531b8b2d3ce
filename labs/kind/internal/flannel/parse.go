package flannel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Info is what a kube-flannel manifest says that svclab depends on.
type Info struct {
	// FlannelImage runs flanneld (container kube-flannel) and install-conf
	// (init container install-cni); PluginImage copies the CNI plugin
	// (init container install-cni-plugin).
	FlannelImage, PluginImage string
	// CNIVersion is the conflist's cniVersion (cni-conf.json).
	CNIVersion string
	// Network is net-conf.json's Network: the cluster's pod subnet.
	Network netip.Prefix
	// EnableIPv4, EnableIPv6 and IPv6Network are net-conf.json's
	// (flannel's defaults: IPv4 on, IPv6 off).
	EnableIPv4, EnableIPv6 bool
	IPv6Network            netip.Prefix
	// Backend is net-conf.json's Backend: Type, and the VXLAN device's VNI
	// and UDP port (0: flannel's defaults, VNI 1 and the kernel's 8472).
	Backend Backend
}

// Backend is net-conf.json's Backend.
type Backend struct {
	Type string
	VNI  int
	Port int
}

// The VXLAN backend's defaults (flannel's pkg/backend/vxlan: VNI 1; port 0,
// which leaves the kernel's default, 8472) and its device.
const (
	DefaultVNI  = 1
	DefaultPort = 8472
	Device      = "flannel.1"
)

// VXLAN returns the VXLAN device's VNI and port, defaults filled in.
func (b Backend) VXLAN() (vni, port int) {
	vni, port = b.VNI, b.Port
	if vni == 0 {
		vni = DefaultVNI
	}
	if port == 0 {
		port = DefaultPort
	}
	return vni, port
}

// maxManifest bounds the manifest Parse reads.
const maxManifest = 1 << 20

// Parse reads a kube-flannel manifest: its DaemonSet (DaemonSet in
// Namespace) and its ConfigMap kube-flannel-cfg.
func Parse(m string) (Info, error) {
	var info Info
	if len(m) > maxManifest {
		return info, fmt.Errorf("manifest: %d bytes, more than %d", len(m), maxManifest)
	}
	var ds *appsv1.DaemonSet
	var cm *corev1.ConfigMap
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(m)))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return info, fmt.Errorf("manifest: document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return info, fmt.Errorf("manifest: document %d: %w", i, err)
		}
		switch tm.Kind {
		case "DaemonSet":
			ds = &appsv1.DaemonSet{}
			if err := yaml.UnmarshalStrict(doc, ds); err != nil {
				return info, fmt.Errorf("manifest: DaemonSet: %w", err)
			}
		case "ConfigMap":
			cm = &corev1.ConfigMap{}
			if err := yaml.UnmarshalStrict(doc, cm); err != nil {
				return info, fmt.Errorf("manifest: ConfigMap: %w", err)
			}
		}
	}
	if ds == nil || ds.Name != DaemonSet || ds.Namespace != Namespace {
		return info, fmt.Errorf("manifest: no DaemonSet %s/%s", Namespace, DaemonSet)
	}
	if cm == nil {
		return info, fmt.Errorf("manifest: no ConfigMap")
	}
	if err := info.images(ds); err != nil {
		return info, err
	}
	if err := info.config(cm); err != nil {
		return info, err
	}
	return info, nil
}

// images finds the two images in the DaemonSet's containers.
func (info *Info) images(ds *appsv1.DaemonSet) error {
	byName := map[string]string{}
	spec := ds.Spec.Template.Spec
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		byName[c.Name] = c.Image
	}
	info.PluginImage, info.FlannelImage = byName["install-cni-plugin"], byName["kube-flannel"]
	if info.PluginImage == "" || info.FlannelImage == "" {
		return fmt.Errorf("manifest: DaemonSet %s: want containers install-cni-plugin and kube-flannel with images, have %v", DaemonSet, byName)
	}
	if other := byName["install-cni"]; other != "" && other != info.FlannelImage {
		return fmt.Errorf("manifest: DaemonSet %s: install-cni runs %s, kube-flannel %s: want one flannel image", DaemonSet, other, info.FlannelImage)
	}
	return nil
}

// config reads cni-conf.json and net-conf.json.
func (info *Info) config(cm *corev1.ConfigMap) error {
	var cni struct {
		CNIVersion string `json:"cniVersion"`
	}
	if err := json.Unmarshal([]byte(cm.Data["cni-conf.json"]), &cni); err != nil {
		return fmt.Errorf("manifest: ConfigMap %s: cni-conf.json: %w", cm.Name, err)
	}
	info.CNIVersion = cni.CNIVersion
	net := struct {
		Network     string
		EnableIPv4  bool
		EnableIPv6  bool
		IPv6Network string
		Backend     Backend
	}{EnableIPv4: true}
	if err := json.Unmarshal([]byte(cm.Data["net-conf.json"]), &net); err != nil {
		return fmt.Errorf("manifest: ConfigMap %s: net-conf.json: %w", cm.Name, err)
	}
	p, err := netip.ParsePrefix(net.Network)
	if err != nil {
		return fmt.Errorf("manifest: ConfigMap %s: net-conf.json: Network: %w", cm.Name, err)
	}
	info.Network, info.Backend = p, net.Backend
	info.EnableIPv4, info.EnableIPv6 = net.EnableIPv4, net.EnableIPv6
	if net.IPv6Network != "" {
		p6, err := netip.ParsePrefix(net.IPv6Network)
		if err != nil {
			return fmt.Errorf("manifest: ConfigMap %s: net-conf.json: IPv6Network: %w", cm.Name, err)
		}
		info.IPv6Network = p6
	}
	return nil
}
