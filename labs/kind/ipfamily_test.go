package kind

import (
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/internal/flannel"
	"github.com/svclab/svclab/labs/kind/internal/host"
)

// networkingConfig is a config with only these networking lines.
func networkingConfig(t *testing.T, lines ...string) *v1alpha4.Cluster {
	t.Helper()
	doc := "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnetworking:\n"
	for _, l := range lines {
		doc += "  " + l + "\n"
	}
	cfg, err := ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestIPFamilyDefaults: kind's subnets for each ipFamily when the config
// leaves them out (pkg/apis/config/v1alpha4/default.go), in the config
// kind gets; the ipFamily itself passes through.
func TestIPFamilyDefaults(t *testing.T) {
	for _, tc := range []struct{ family, pods, services string }{
		{"", "10.244.0.0/16", "10.96.0.0/16"},
		{"ipv4", "10.244.0.0/16", "10.96.0.0/16"},
		{"ipv6", "fd00:10:244::/56", "fd00:10:96::/112"},
		{"dual", "10.244.0.0/16,fd00:10:244::/56", "10.96.0.0/16,fd00:10:96::/112"},
	} {
		var lines []string
		if tc.family != "" {
			lines = append(lines, "ipFamily: "+tc.family)
		}
		cfg := networkingConfig(t, lines...)
		s, err := resolveSettings(cfg, CreateOptions{CNI: flannel.Name}, false)
		if err != nil {
			t.Fatalf("ipFamily %q: %v", tc.family, err)
		}
		out := adaptConfig(cfg, s, host.Quirks{})
		if out.Networking.PodSubnet != tc.pods || out.Networking.ServiceSubnet != tc.services || string(out.Networking.IPFamily) != tc.family {
			t.Errorf("ipFamily %q: kind gets ipFamily %q, podSubnet %q, serviceSubnet %q; want %q, %q",
				tc.family, out.Networking.IPFamily, out.Networking.PodSubnet, out.Networking.ServiceSubnet, tc.pods, tc.services)
		}
		if want := tc.family; s.IPFamily != v1alpha4.ClusterIPFamily(want) && !(want == "" && s.IPFamily == v1alpha4.IPv4Family) {
			t.Errorf("ipFamily %q: settings say %q", tc.family, s.IPFamily)
		}
	}
}

// TestIPFamilyValidation: kind's messages (pkg/internal/apis/config/
// validate.go) for a bad ipFamily and subnets of the wrong family or
// number, before anything starts.
func TestIPFamilyValidation(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"ipFamily: ipv5"}, "invalid ipFamily: ipv5"},
		{[]string{"ipFamily: ipv6", "podSubnet: 10.244.0.0/16"}, "invalid pod subnet expected IPv6 CIDR for IPv6 family"},
		{[]string{"ipFamily: ipv4", "serviceSubnet: fd00:10:96::/112"}, "invalid service subnet expected IPv4 CIDR for IPv4 family"},
		{[]string{"podSubnet: 10.244.0.0/16,fd00:10:244::/56"}, "invalid pod subnet only one CIDR allowed for single-stack networking"},
		{[]string{"ipFamily: dual", "podSubnet: 10.244.0.0/16,10.245.0.0/16"}, "invalid pod subnet expected one (IPv4 or IPv6) CIDR or two CIDRs from each family for dual-stack networking"},
		{[]string{"ipFamily: dual", "serviceSubnet: 10.96.0.0/16,fd00:10:96::/112,fd00:11:96::/112"}, "invalid service subnet expected one (IPv4 or IPv6) CIDR or two CIDRs from each family for dual-stack networking"},
		{[]string{"ipFamily: dual", "podSubnet: 10.244.0.0/16,fd00:10:244::/200"}, `invalid pod subnet failed to parse cidr value:"fd00:10:244::/200"`},
	} {
		cfg := networkingConfig(t, tc.lines...)
		_, err := resolveSettings(cfg, CreateOptions{CNI: flannel.Name}, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.lines, err, tc.want)
		}
	}
	// One CIDR is enough for dual, as kind allows.
	if err := validateNetworking(networkingConfig(t, "ipFamily: dual", "podSubnet: 10.244.0.0/16")); err != nil {
		t.Errorf("dual with one pod CIDR: %v", err)
	}
}

// TestIPFamilyNeedsAFlannel: ipv6 and dual run the real flannel or
// svclab's flannel-vxlan with kind's kube-proxy; the IPv4-only pod
// networks and proxy are refused by name; the real flannel's IPv4
// Network must still be the manifest's.
func TestIPFamilyNeedsAFlannel(t *testing.T) {
	for _, family := range []string{"ipv6", "dual"} {
		cfg := networkingConfig(t, "ipFamily: "+family)
		if _, err := resolveSettings(cfg, CreateOptions{CNI: cni.FlannelVXLAN}, false); err != nil {
			t.Errorf("ipFamily %s --cni %s: %v", family, cni.FlannelVXLAN, err)
		}
		for _, c := range []string{cni.CalicoProxyARP, CNICalico} {
			_, err := resolveSettings(cfg, CreateOptions{CNI: c}, false)
			if err == nil || !strings.Contains(err.Error(), "--cni "+c) || !strings.Contains(err.Error(), "--cni flannel") {
				t.Errorf("ipFamily %s --cni %s: got %v, want an error naming it and --cni flannel", family, c, err)
			}
		}
		_, err := resolveSettings(cfg, CreateOptions{CNI: flannel.Name, Proxy: ProxySvclab}, false)
		if err == nil || !strings.Contains(err.Error(), "--proxy svclab") {
			t.Errorf("ipFamily %s --proxy svclab: got %v", family, err)
		}
	}
	cfg := networkingConfig(t, "ipFamily: dual", "podSubnet: 10.8.0.0/16,fd00:10:244::/56")
	if _, err := resolveSettings(cfg, CreateOptions{CNI: flannel.Name}, false); err == nil || !strings.Contains(err.Error(), "10.244.0.0/16") {
		t.Errorf("dual with flannel and another IPv4 Network: got %v", err)
	}
	cfg = networkingConfig(t, "ipFamily: ipv6", "podSubnet: fd00:99::/56")
	if _, err := resolveSettings(cfg, CreateOptions{CNI: flannel.Name}, false); err != nil {
		t.Errorf("ipv6 with any IPv6 podSubnet (flannel's IPv6Network): %v", err)
	}
}

// TestFlannelManifestByFamily: upstream's manifest as kept for ipv4;
// flannel's IPv6 settings from the IPv6 podSubnet for dual and ipv6.
func TestFlannelManifestByFamily(t *testing.T) {
	m, err := flannelManifest(v1alpha4.IPv4Family, DefaultPodSubnet)
	if err != nil || m != flannel.Manifest() {
		t.Fatalf("ipv4: err %v, manifest changed", err)
	}
	for _, tc := range []struct {
		family v1alpha4.ClusterIPFamily
		pods   string
		ipv4   bool
	}{
		{v1alpha4.DualStackFamily, "10.244.0.0/16,fd00:10:244::/56", true},
		{v1alpha4.IPv6Family, "fd00:10:244::/56", false},
	} {
		m, err := flannelManifest(tc.family, tc.pods)
		if err != nil {
			t.Fatal(err)
		}
		info, err := flannel.Parse(m)
		if err != nil {
			t.Fatal(err)
		}
		if !info.EnableIPv6 || info.IPv6Network.String() != "fd00:10:244::/56" || info.EnableIPv4 != tc.ipv4 {
			t.Errorf("%s: net-conf.json %+v", tc.family, info)
		}
	}
	if _, err := flannelManifest(v1alpha4.DualStackFamily, "10.244.0.0/16"); err == nil {
		t.Error("dual without an IPv6 podSubnet: want an error")
	}
}
