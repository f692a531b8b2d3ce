package ipvs

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

func parseConfig(t *testing.T, yaml string) config.Config {
	t.Helper()
	cfg, err := config.Parse("kube-proxy.yaml", []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n"+yaml))
	if err != nil {
		t.Fatalf("config.Parse: %v", err)
	}
	return cfg
}

func TestOptionsFromConfig(t *testing.T) {
	cfg := parseConfig(t, `clusterCIDR: 10.244.0.0/16
bindAddress: 192.168.0.10
nodePortAddresses: ["192.168.0.0/24", "fd00::/64"]
iptables:
  masqueradeAll: true
ipvs:
  scheduler: wlc
  strictARP: true
  excludeCIDRs: ["172.16.0.0/12", "fd00::/8"]
  tcpTimeout: 15m
  tcpFinTimeout: 30s
  udpTimeout: 5s
`)
	o, err := OptionsFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o.Scheduler != "wlc" || !o.StrictARP || !o.MasqueradeAll || o.MasqueradeBit != 14 {
		t.Errorf("options %+v", o)
	}
	if o.Timeouts != (kernel.Timeouts{TCP: 15 * time.Minute, TCPFin: 30 * time.Second, UDP: 5 * time.Second}) {
		t.Errorf("timeouts %+v", o.Timeouts)
	}
	if !slices.Equal(o.ExcludeCIDRs, []netip.Prefix{prefix("172.16.0.0/12")}) || !slices.Equal(o.NodePortCIDRs, []netip.Prefix{prefix("192.168.0.0/24")}) {
		t.Errorf("CIDRs: exclude %v, node ports %v (IPv6 ones belong to an IPv6 proxier)", o.ExcludeCIDRs, o.NodePortCIDRs)
	}
	if o.ClusterCIDR != prefix("10.244.0.0/16") || o.NodeIP != addr("192.168.0.10") {
		t.Errorf("cluster CIDR %v, node IP %v", o.ClusterCIDR, o.NodeIP)
	}
}

func TestOptionsFromConfigNamesTheBadField(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"ipvs:\n  scheduler: \"Round Robin\"\n", `kube-proxy.yaml: ipvs.scheduler "Round Robin": not an IPVS scheduler name`},
		{"ipvs:\n  excludeCIDRs: [\"10.0.0.0/8\", \"nonsense\"]\n", `kube-proxy.yaml: ipvs.excludeCIDRs[1] "nonsense": not a CIDR`},
		{"ipvs:\n  tcpTimeout: -5s\n", `kube-proxy.yaml: ipvs.tcpTimeout "-5s": must be greater than or equal to 0`},
		{"ipvs:\n  udpTimeout: 1500ms\n", `kube-proxy.yaml: ipvs.udpTimeout "1.5s": must be a whole number of seconds`},
		{"nodePortAddresses: [primary]\n", `kube-proxy.yaml: nodePortAddresses "primary": "primary" is not implemented`},
		{"nodePortAddresses: [\"10.0.0.1\"]\n", `kube-proxy.yaml: nodePortAddresses[0] "10.0.0.1": not a CIDR`},
	} {
		cfg, err := config.Parse("kube-proxy.yaml", []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n"+tc.yaml))
		if err == nil {
			_, err = OptionsFromConfig(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.yaml, err, tc.want)
		}
	}
}

func TestOptionsFromDefaultConfig(t *testing.T) {
	o, err := OptionsFromConfig(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	if o.Scheduler != "" || o.Timeouts != (kernel.Timeouts{}) || o.StrictARP {
		t.Errorf("defaults %+v", o)
	}
}
