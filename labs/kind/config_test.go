package kind

import (
	"path/filepath"
	"strings"
	"testing"

	proxyconfig "github.com/svclab/svclab/proxy/config"

	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/internal/host"
)

func TestParseConfigIsStrict(t *testing.T) {
	_, err := ParseConfig([]byte("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnetworking:\n  podSubnett: 10.0.0.0/16\n"))
	if err == nil || !strings.Contains(err.Error(), "podSubnett") {
		t.Fatalf("unknown field: got %v, want an error naming podSubnett", err)
	}
	if _, err := ParseConfig([]byte("kind: Lab\napiVersion: svclab.dev/v1\n")); err == nil {
		t.Fatal("another kind: want an error")
	}
	if _, err := ParseConfig([]byte("")); err == nil {
		t.Fatal("empty: want an error")
	}
}

func TestClusterConfigsInTheRepositoryParse(t *testing.T) {
	files, err := filepath.Glob("../../clusters/kind/*.yaml")
	if err != nil || len(files) < 6 {
		t.Fatalf("clusters/kind/*.yaml: %v, %v", files, err)
	}
	for _, f := range files {
		if _, err := LoadConfig(f); err != nil {
			t.Error(err)
		}
	}
}

func TestResolveSettingsAndAdaptConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nname: x\nnetworking:\n  kubeProxyMode: ipvs\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resolveSettings(cfg, CreateOptions{}, false); err == nil || !strings.Contains(err.Error(), "IPVS") {
		t.Fatalf("ipvs without IPVS: got %v", err)
	}
	s, err := resolveSettings(cfg, CreateOptions{Proxy: ProxySvclab, Name: "y"}, false)
	if err == nil {
		t.Fatalf("--proxy svclab with kubeProxyMode ipvs: got %+v, want an error", s)
	}
	cfg.Networking.KubeProxyMode = ""
	s, err = resolveSettings(cfg, CreateOptions{Proxy: ProxySvclab, CNI: cni.CalicoProxyARP}, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "x" || s.ProxyMode != "none" || s.CNI != cni.CalicoProxyARP {
		t.Fatalf("settings %+v", s)
	}
	out := adaptConfig(cfg, s, host.Quirks{CgroupV1: true})
	if !out.Networking.DisableDefaultCNI || out.Networking.KubeProxyMode != "none" || out.Networking.PodSubnet != DefaultPodSubnet ||
		len(out.KubeadmConfigPatches) != 1 || len(out.Nodes) != 1 {
		t.Fatalf("adapted config %+v", out)
	}
	if cfg.Networking.DisableDefaultCNI {
		t.Fatal("adaptConfig changed its input")
	}
	if _, err := resolveSettings(cfg, CreateOptions{CNI: "weave"}, false); err == nil {
		t.Fatal("unknown cni: want an error")
	}
	if _, err := resolveSettings(cfg, CreateOptions{Name: "Bad_Name"}, false); err == nil {
		t.Fatal("bad name: want an error")
	}
}

// TestKubeProxyPatchesDecodeStrictly: every KubeProxyConfiguration patch
// of clusters/kind/*.yaml decodes strictly (kube-proxy only warns about an
// unknown field, so a misspelt one — a top-level masqueradeAll, which
// v1alpha1 keeps under iptables — would silently do nothing), and
// foreign.yaml's says what its comment promises.
func TestKubeProxyPatchesDecodeStrictly(t *testing.T) {
	files, _ := filepath.Glob("../../clusters/kind/*.yaml")
	for _, f := range files {
		cfg, err := LoadConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, patch := range cfg.KubeadmConfigPatches {
			if !strings.Contains(patch, "kind: KubeProxyConfiguration") {
				continue
			}
			c, err := proxyconfig.Parse(f, []byte(patch))
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if filepath.Base(f) == "foreign.yaml" && (!c.MasqueradeAll || !strings.Contains(patch, "detectLocalMode: InterfaceNamePrefix") || !strings.Contains(patch, "interfaceNamePrefix: cali")) {
				t.Errorf("%s: masqueradeAll %v, want it and detectLocalMode InterfaceNamePrefix cali:\n%s", f, c.MasqueradeAll, patch)
			}
		}
	}
}
