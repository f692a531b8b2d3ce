package kind

import (
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/internal/flannel"
)

// --cni flannel: the config's podSubnet must be the manifest's Network
// (10.244.0.0/16), given or by default; clusters/kind/flannel.yaml is.
func TestRealFlannelSettings(t *testing.T) {
	cfg, err := LoadConfig("../../clusters/kind/flannel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := resolveSettings(cfg, CreateOptions{CNI: flannel.Name}, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.CNI != flannel.Name || s.ProxyMode != "iptables" {
		t.Errorf("settings %+v", s)
	}
	cfg.Networking.PodSubnet = ""
	if _, err := resolveSettings(cfg, CreateOptions{CNI: flannel.Name}, false); err != nil {
		t.Errorf("default podSubnet %s: %v", DefaultPodSubnet, err)
	}
	cfg.Networking.PodSubnet = "192.168.0.0/16"
	_, err = resolveSettings(cfg, CreateOptions{CNI: flannel.Name}, false)
	if err == nil || !strings.Contains(err.Error(), "192.168.0.0/16") || !strings.Contains(err.Error(), "10.244.0.0/16") {
		t.Errorf("podSubnet 192.168.0.0/16 with --cni flannel: got %v, want an error naming both networks", err)
	}
	// svclab's CNI takes any podSubnet.
	if _, err := resolveSettings(cfg, CreateOptions{CNI: cni.CalicoProxyARP}, false); err != nil {
		t.Errorf("--cni calico-proxyarp with 192.168.0.0/16: %v", err)
	}
	cfg.Networking.PodSubnet = "10.244.0.0/33"
	if _, err := resolveSettings(cfg, CreateOptions{CNI: flannel.Name}, false); err == nil || !strings.Contains(err.Error(), "podSubnet") {
		t.Errorf("a bad podSubnet: got %v", err)
	}
}

func TestPodNetworkManifest(t *testing.T) {
	m, err := podNetworkManifest(cni.ManifestParams{Variant: flannel.Name, ClusterCIDR: DefaultPodSubnet}, v1alpha4.IPv4Family, "")
	if err != nil || m != flannel.Manifest() {
		t.Errorf("--cni flannel applies %d bytes (err %v), want upstream's kube-flannel.yml as kept (%d bytes)", len(m), err, len(flannel.Manifest()))
	}
	m, err = podNetworkManifest(cni.ManifestParams{Variant: cni.FlannelVXLAN, Image: "svclab/svclab:dev"}, v1alpha4.IPv4Family, "")
	if err != nil || !strings.Contains(m, "name: svclab-cni") {
		t.Errorf("--cni flannel-vxlan: err %v, manifest without the svclab-cni DaemonSet", err)
	}
}

// get clusters tells the real flannel from svclab's imitation.
func TestDescribeCNI(t *testing.T) {
	for in, want := range map[string]string{
		flannel.Name:       "flannel " + flannel.Version + " (upstream kube-flannel.yml)",
		cni.FlannelVXLAN:   "flannel-vxlan (svclab's CNI)",
		cni.CalicoProxyARP: "calico-proxyarp (svclab's CNI)",
		"":                 "",
	} {
		if got := DescribeCNI(in); got != want {
			t.Errorf("DescribeCNI(%q) = %q, want %q", in, got, want)
		}
	}
	for _, n := range PodNetworks {
		if err := validateCNI(n); err != nil {
			t.Error(err)
		}
	}
	if err := validateCNI("weave"); err == nil {
		t.Error("weave: want an error")
	}
}
