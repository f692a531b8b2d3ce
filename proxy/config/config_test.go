package config

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const header = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"

const cmSource = "kube-system/kube-proxy config.conf"

func configMap(conf string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ConfigMapNamespace, Name: ConfigMapName},
		Data:       map[string]string{ConfigMapKey: conf},
	}
}

func TestDefaults(t *testing.T) {
	c, err := FromConfigMap(configMap(header))
	if err != nil {
		t.Fatalf("FromConfigMap: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Source", c.Source, cmSource},
		{"Mode", c.Mode, ModeIPTables},
		{"ClusterCIDRs", len(c.ClusterCIDRs), 0},
		{"MasqueradeBit", c.MasqueradeBit, 14},
		{"MasqueradeMark", c.MasqueradeMark(), uint32(0x4000)},
		{"MasqueradeAll", c.MasqueradeAll, false},
		{"SyncPeriod", c.SyncPeriod, 30 * time.Second},
		{"MinSyncPeriod", c.MinSyncPeriod, time.Second},
		{"HealthTimeout", c.HealthTimeout(), time.Minute},
		{"MetricsBindAddress", c.MetricsBindAddress, "127.0.0.1:10249"},
		{"HealthzBindAddress", c.HealthzBindAddress, "0.0.0.0:10256"},
		{"IPVSScheduler", c.IPVSScheduler, ""},
		{"LocalhostNodePorts", c.LocalhostNodePorts, true},
		{"IPv4LocalhostNodePorts", c.IPv4LocalhostNodePorts(), true},
		{"NodePortAddresses", len(c.NodePortAddresses), 0},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	d := Default()
	if d.Mode != c.Mode || d.SyncPeriod != c.SyncPeriod || d.MetricsBindAddress != c.MetricsBindAddress {
		t.Errorf("Default() = %+v, differs from an empty document's %+v", d, c)
	}
}

func TestParseHonouredFields(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, c Config)
	}{
		{"kubeadm-like document", `
bindAddress: 0.0.0.0
clusterCIDR: 10.244.0.0/16
mode: ""
metricsBindAddress: ""
iptables:
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 0s
  syncPeriod: 0s
ipvs:
  scheduler: ""
`, func(t *testing.T, c Config) {
			if c.Mode != ModeIPTables || c.MasqueradeBit != 14 || c.SyncPeriod != 30*time.Second ||
				c.MinSyncPeriod != time.Second || c.MetricsBindAddress != "127.0.0.1:10249" {
				t.Errorf("kubeadm zero values not defaulted: %+v", c)
			}
			if len(c.ClusterCIDRs) != 1 || c.ClusterCIDRs[0] != netip.MustParsePrefix("10.244.0.0/16") {
				t.Errorf("ClusterCIDRs = %v", c.ClusterCIDRs)
			}
		}},
		{"explicit values", `
mode: iptables
clusterCIDR: 10.244.0.0/16,fd00:10:244::/56
metricsBindAddress: 0.0.0.0:10249
healthzBindAddress: 127.0.0.1:12345
iptables:
  masqueradeAll: true
  masqueradeBit: 15
  minSyncPeriod: 250ms
  syncPeriod: 10s
`, func(t *testing.T, c Config) {
			if !c.MasqueradeAll || c.MasqueradeBit != 15 || c.MasqueradeMark() != 0x8000 {
				t.Errorf("masquerade = %v bit %d", c.MasqueradeAll, c.MasqueradeBit)
			}
			if c.SyncPeriod != 10*time.Second || c.MinSyncPeriod != 250*time.Millisecond {
				t.Errorf("periods = %v/%v", c.SyncPeriod, c.MinSyncPeriod)
			}
			if c.MetricsBindAddress != "0.0.0.0:10249" || c.HealthzBindAddress != "127.0.0.1:12345" {
				t.Errorf("addresses = %q %q", c.MetricsBindAddress, c.HealthzBindAddress)
			}
			if len(c.ClusterCIDRs) != 2 || !c.ClusterCIDRs[1].Addr().Is6() {
				t.Errorf("ClusterCIDRs = %v", c.ClusterCIDRs)
			}
		}},
		{"bare IPs get upstream ports", "metricsBindAddress: 0.0.0.0\nhealthzBindAddress: 127.0.0.1\n",
			func(t *testing.T, c Config) {
				if c.MetricsBindAddress != "0.0.0.0:10249" || c.HealthzBindAddress != "127.0.0.1:10256" {
					t.Errorf("addresses = %q %q", c.MetricsBindAddress, c.HealthzBindAddress)
				}
			}},
		{"IPv6 bindAddress moves the defaults to IPv6", "bindAddress: '::'\n",
			func(t *testing.T, c Config) {
				if c.MetricsBindAddress != "[::1]:10249" || c.HealthzBindAddress != "[::]:10256" {
					t.Errorf("addresses = %q %q", c.MetricsBindAddress, c.HealthzBindAddress)
				}
			}},
		{"ipvs mode takes the ipvs periods and keeps the scheduler", `
mode: ipvs
ipvs:
  scheduler: wrr
  syncPeriod: 5s
  minSyncPeriod: 2s
`, func(t *testing.T, c Config) {
			if c.Mode != ModeIPVS || c.IPVSScheduler != "wrr" || c.SyncPeriod != 5*time.Second || c.MinSyncPeriod != 2*time.Second {
				t.Errorf("ipvs config = %+v", c)
			}
		}},
		{"nftables mode takes the nftables masquerade bit", "mode: nftables\nnftables:\n  masqueradeBit: 3\n",
			func(t *testing.T, c Config) {
				if c.Mode != ModeNFTables || c.MasqueradeBit != 3 {
					t.Errorf("nftables config = %+v", c)
				}
			}},
		{"fields svclab ignores are still accepted", "hostnameOverride: node-a\nconntrack:\n  maxPerCore: 0\nnodePortAddresses: [primary]\n",
			func(t *testing.T, c Config) {
				if c.Versioned.HostnameOverride != "node-a" {
					t.Errorf("Versioned.HostnameOverride = %q", c.Versioned.HostnameOverride)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromConfigMap(configMap(header + tt.body))
			if err != nil {
				t.Fatalf("FromConfigMap: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		body string // appended to header unless noHeader
		raw  bool   // body is the whole document
		want string // the error message, exactly
	}{
		{"unknown mode", "mode: foo\n", false,
			cmSource + `: mode "foo": unknown proxy mode (want iptables, ipvs, nftables)`},
		{"unknown top-level field", "modes: iptables\n", false,
			cmSource + `: modes: unknown field`},
		{"unknown nested field", "iptables:\n  masqueradeBits: 14\n", false,
			cmSource + `: iptables.masqueradeBits: unknown field`},
		{"duplicate field", "mode: iptables\nmode: ipvs\n", false,
			cmSource + `: malformed YAML: yaml: unmarshal errors:`},
		{"malformed YAML", "iptables: [\n", false,
			cmSource + `: malformed YAML: `},
		{"wrong type", "iptables:\n  masqueradeBit: fourteen\n", false,
			cmSource + `: cannot decode: json: cannot unmarshal string into Go struct field KubeProxyIPTablesConfiguration.iptables.masqueradeBit of type int32`},
		{"bad duration", "iptables:\n  syncPeriod: 30 seconds\n", false,
			cmSource + `: iptables.syncPeriod "30 seconds": not a duration: want a string such as "30s" or "1m"`},
		{"number as duration", "iptables:\n  minSyncPeriod: 1\n", false,
			cmSource + `: iptables.minSyncPeriod "1": not a duration: want a string such as "30s" or "1m"`},
		{"masqueradeBit out of range", "iptables:\n  masqueradeBit: 32\n", false,
			cmSource + `: iptables.masqueradeBit "32": must be within the range [0, 31]`},
		{"negative masqueradeBit", "iptables:\n  masqueradeBit: -1\n", false,
			cmSource + `: iptables.masqueradeBit "-1": must be within the range [0, 31]`},
		{"negative syncPeriod", "iptables:\n  syncPeriod: -5s\n", false,
			cmSource + `: iptables.syncPeriod "-5s": must be greater than 0`},
		{"negative minSyncPeriod", "iptables:\n  minSyncPeriod: -1s\n", false,
			cmSource + `: iptables.minSyncPeriod "-1s": must be greater than or equal to 0`},
		{"minSyncPeriod above syncPeriod", "iptables:\n  minSyncPeriod: 1m\n  syncPeriod: 10s\n", false,
			cmSource + `: iptables.syncPeriod "10s": must be greater than or equal to iptables.minSyncPeriod (1m0s)`},
		{"bad clusterCIDR", "clusterCIDR: 10.244.0.0/33\n", false,
			cmSource + `: clusterCIDR "10.244.0.0/33": "10.244.0.0/33" is not a CIDR (e.g. 10.244.0.0/16)`},
		{"two IPv4 clusterCIDRs", "clusterCIDR: 10.244.0.0/16,10.245.0.0/16\n", false,
			cmSource + `: clusterCIDR "10.244.0.0/16,10.245.0.0/16": a pair of CIDRs must be one IPv4 and one IPv6`},
		{"metrics address not IP:port", "metricsBindAddress: localhost:10249\n", false,
			cmSource + `: metricsBindAddress "localhost:10249": host "localhost" must be an IP address`},
		{"healthz port out of range", "healthzBindAddress: 0.0.0.0:70000\n", false,
			cmSource + `: healthzBindAddress "0.0.0.0:70000": port "70000" must be within 1..65535`},
		{"missing apiVersion and kind", "mode: iptables\n", true,
			cmSource + ": apiVersion: missing (want kubeproxy.config.k8s.io/v1alpha1)\n" +
				cmSource + ": kind: missing (want KubeProxyConfiguration)"},
		{"wrong apiVersion", "apiVersion: kubeproxy.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n", true,
			cmSource + `: apiVersion "kubeproxy.config.k8s.io/v1beta1": wrong (want kubeproxy.config.k8s.io/v1alpha1)`},
		{"empty document", "", true,
			cmSource + ": apiVersion: missing (want kubeproxy.config.k8s.io/v1alpha1)\n" +
				cmSource + ": kind: missing (want KubeProxyConfiguration)"},
		{"several problems at once", "iptables:\n  masqueradeBit: 40\nmetricsBindAddress: nowhere\n", false,
			cmSource + `: iptables.masqueradeBit "40": must be within the range [0, 31]` + "\n" +
				cmSource + `: metricsBindAddress "nowhere": must be IP:port`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.body
			if !tt.raw {
				doc = header + tt.body
			}
			_, err := FromConfigMap(configMap(doc))
			if err == nil {
				t.Fatalf("FromConfigMap accepted %q", doc)
			}
			got := err.Error()
			if strings.HasSuffix(tt.want, ": ") || strings.HasSuffix(tt.want, ":") {
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("error = %q, want prefix %q", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Errorf("error = %q\n          want %q", got, tt.want)
			}
		})
	}
}

func TestConfigMapProblems(t *testing.T) {
	if _, err := FromConfigMap(nil); err == nil {
		t.Error("FromConfigMap(nil) succeeded")
	}
	cm := configMap(header)
	delete(cm.Data, ConfigMapKey)
	_, err := FromConfigMap(cm)
	want := `kube-system/kube-proxy: no "config.conf" key in the ConfigMap's data`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestParseNamesFileSource(t *testing.T) {
	_, err := Parse("/etc/kube-proxy/config.conf", []byte(header+"mode: userspace\n"))
	want := `/etc/kube-proxy/config.conf: mode "userspace": unknown proxy mode (want iptables, ipvs, nftables)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestCheckModeSupported(t *testing.T) {
	tests := []struct {
		mode      string
		supported []Mode
		want      string
	}{
		{"", []Mode{ModeIPTables}, ""},
		{"iptables", []Mode{ModeIPTables}, ""},
		{"ipvs", []Mode{ModeIPTables, ModeIPVS}, ""},
		{"ipvs", []Mode{ModeIPTables}, cmSource + `: mode "ipvs": not implemented by svclab yet (supported: iptables)`},
		{"nftables", []Mode{ModeIPTables, ModeIPVS}, cmSource + `: mode "nftables": not implemented by svclab yet (supported: iptables, ipvs)`},
	}
	for _, tt := range tests {
		c, err := FromConfigMap(configMap(header + "mode: " + strings.TrimSpace(`"`+tt.mode+`"`) + "\n"))
		if err != nil {
			t.Fatalf("mode %q: %v", tt.mode, err)
		}
		err = c.CheckModeSupported(tt.supported...)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("mode %q supported %v: error = %q, want %q", tt.mode, tt.supported, got, tt.want)
		}
	}
}

func TestDurationPathsCoverHonouredFields(t *testing.T) {
	want := []string{"iptables.syncPeriod", "iptables.minSyncPeriod", "ipvs.syncPeriod", "nftables.minSyncPeriod", "configSyncPeriod", "conntrack.tcpEstablishedTimeout"}
	have := map[string]bool{}
	for _, p := range durationPaths {
		have[p] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("durationPaths lacks %q (has %v)", w, durationPaths)
		}
	}
}

// TestParseBounded: a config.conf larger than a ConfigMap can hold is
// refused before it is decoded.
func TestParseBounded(t *testing.T) {
	big := "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" + strings.Repeat("#", MaxBytes)
	_, err := Parse("big.conf", []byte(big))
	if want := "big.conf: larger than 1048576 bytes, the most a ConfigMap holds"; err == nil || err.Error() != want {
		t.Errorf("Parse(big) = %v, want %s", err, want)
	}
}
