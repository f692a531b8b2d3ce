package config

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
)

// TestDefaultsAreUpstreams: a document that sets nothing is defaulted to
// the values of upstream's SetDefaults_KubeProxyConfiguration (v1.36.4,
// written out here from its source), every field, not only the ones
// svclab acts on.
func TestDefaultsAreUpstreams(t *testing.T) {
	c, err := Parse("empty.yaml", []byte(header))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Versioned.DeepCopy()
	if got.Logging.Format != "text" || got.Logging.FlushFrequency.Duration.Duration != 5*time.Second {
		t.Errorf("logging = %+v, want format text, flushFrequency 5s (SetRecommendedLoggingConfiguration)", got.Logging)
	}
	got.Logging = kubeproxyconfigv1alpha1.KubeProxyConfiguration{}.Logging
	i32 := func(v int32) *int32 { return &v }
	yes := true
	want := &kubeproxyconfigv1alpha1.KubeProxyConfiguration{
		TypeMeta:           metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		FeatureGates:       map[string]bool{},
		ClientConnection:   componentbaseconfigv1alpha1.ClientConnectionConfiguration{ContentType: "application/vnd.kubernetes.protobuf", QPS: 5, Burst: 10},
		BindAddress:        "0.0.0.0",
		HealthzBindAddress: "0.0.0.0:10256",
		MetricsBindAddress: "127.0.0.1:10249",
		IPTables: kubeproxyconfigv1alpha1.KubeProxyIPTablesConfiguration{
			MasqueradeBit:      i32(14),
			LocalhostNodePorts: &yes,
			SyncPeriod:         metav1.Duration{Duration: 30 * time.Second},
			MinSyncPeriod:      metav1.Duration{Duration: time.Second},
		},
		IPVS: kubeproxyconfigv1alpha1.KubeProxyIPVSConfiguration{SyncPeriod: metav1.Duration{Duration: 30 * time.Second}},
		NFTables: kubeproxyconfigv1alpha1.KubeProxyNFTablesConfiguration{
			MasqueradeBit: i32(14),
			SyncPeriod:    metav1.Duration{Duration: 30 * time.Second},
			MinSyncPeriod: metav1.Duration{Duration: time.Second},
		},
		Conntrack: kubeproxyconfigv1alpha1.KubeProxyConntrackConfiguration{
			MaxPerCore:            i32(32 * 1024),
			Min:                   i32(128 * 1024),
			TCPEstablishedTimeout: &metav1.Duration{Duration: 24 * time.Hour},
			TCPCloseWaitTimeout:   &metav1.Duration{Duration: time.Hour},
		},
		OOMScoreAdj:      i32(-999),
		ConfigSyncPeriod: metav1.Duration{Duration: 15 * time.Minute},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaulted document\n got %+v\nwant %+v", got, want)
	}
}

// TestDefaultsKeepWhatIsSet: defaulting fills only what is unset; an
// explicit false localhostNodePorts stays false.
func TestDefaultsKeepWhatIsSet(t *testing.T) {
	c, err := Parse("set.yaml", []byte(header+`oomScoreAdj: 0
iptables: {localhostNodePorts: false, masqueradeBit: 0}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
clientConnection: {qps: 1, burst: 2, contentType: application/json}
configSyncPeriod: 1m
`))
	if err != nil {
		t.Fatal(err)
	}
	v := c.Versioned
	if *v.OOMScoreAdj != 0 || *v.IPTables.LocalhostNodePorts || *v.IPTables.MasqueradeBit != 0 ||
		*v.Conntrack.MaxPerCore != 0 || *v.Conntrack.Min != 0 || v.Conntrack.TCPEstablishedTimeout.Duration != 0 ||
		v.Conntrack.TCPCloseWaitTimeout.Duration != 0 || v.ClientConnection.QPS != 1 || v.ClientConnection.Burst != 2 ||
		v.ClientConnection.ContentType != "application/json" || v.ConfigSyncPeriod.Duration != time.Minute {
		t.Errorf("explicit values were defaulted over: %+v", v)
	}
	if c.LocalhostNodePorts || c.IPv4LocalhostNodePorts() {
		t.Errorf("localhostNodePorts: false reads as %v/%v", c.LocalhostNodePorts, c.IPv4LocalhostNodePorts())
	}
}

// TestDefaultAddresses: upstream's getDefaultAddresses and
// AppendPortIfNeeded, with their sloppy IPv4 parsing.
func TestDefaultAddresses(t *testing.T) {
	for _, tt := range []struct{ bind, healthz, metrics string }{
		{"0.0.0.0", "0.0.0.0:10256", "127.0.0.1:10249"},
		{"10.0.0.1", "0.0.0.0:10256", "127.0.0.1:10249"},
		{"010.000.000.001", "0.0.0.0:10256", "127.0.0.1:10249"}, // leading zeros: still IPv4 to ParseIPSloppy
		{"::ffff:10.0.0.1", "0.0.0.0:10256", "127.0.0.1:10249"},
		{"::", "[::]:10256", "[::1]:10249"},
		{"fd00::1", "[::]:10256", "[::1]:10249"},
		{"not-an-ip", "[::]:10256", "[::1]:10249"}, // upstream: anything not IPv4 gets the IPv6 defaults
	} {
		kp := &kubeproxyconfigv1alpha1.KubeProxyConfiguration{BindAddress: tt.bind}
		applyDefaults(kp)
		if kp.HealthzBindAddress != tt.healthz || kp.MetricsBindAddress != tt.metrics {
			t.Errorf("bindAddress %q: healthz %q metrics %q, want %q %q", tt.bind, kp.HealthzBindAddress, kp.MetricsBindAddress, tt.healthz, tt.metrics)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"127.0.0.1", "127.0.0.1:10249"},
		{"::1", "[::1]:10249"},
		{"127.0.0.1:9999", "127.0.0.1:9999"},
		{"[::1]:9999", "[::1]:9999"},
		{"localhost", "localhost"}, // not an IP: left for validation
	} {
		if got := appendPortIfNeeded(tt.in, ProxyStatusPort); got != tt.want {
			t.Errorf("appendPortIfNeeded(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestIPv4LocalhostNodePorts: upstream's iptables NewProxier serves node
// ports on loopback only when localhostNodePorts is on and the IPv4 part
// of nodePortAddresses contains 127.0.0.0.
func TestIPv4LocalhostNodePorts(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want bool
	}{
		{"", true},
		{"iptables: {localhostNodePorts: true}\n", true},
		{"iptables: {localhostNodePorts: false}\n", false},
		{"nodePortAddresses: [0.0.0.0/0]\n", true},
		{"nodePortAddresses: [127.0.0.1/32]\n", true},
		{"nodePortAddresses: [127.0.0.0/8, 192.168.0.0/16]\n", true},
		{"nodePortAddresses: [100.0.0.0/1]\n", true}, // contains 127.0.0.0
		{"nodePortAddresses: [192.168.0.0/16]\n", false},
		{"nodePortAddresses: [fd00::/64]\n", true}, // no IPv4 entry: all IPv4 addresses
		{"nodePortAddresses: [primary]\n", false},
		{"nodePortAddresses: [localhost]\n", true},
		{"nodePortAddresses: [all]\n", true},
		{"nodePortAddresses: [127.0.0.0/8]\niptables: {localhostNodePorts: false}\n", false},
	} {
		c, err := Parse("npa.yaml", []byte(header+tt.doc))
		if err != nil {
			t.Fatalf("%q: %v", tt.doc, err)
		}
		if got := c.IPv4LocalhostNodePorts(); got != tt.want {
			t.Errorf("%q: IPv4LocalhostNodePorts = %v, want %v", tt.doc, got, tt.want)
		}
	}
}
