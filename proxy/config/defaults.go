package config

import (
	"net"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	netutils "k8s.io/utils/net"
)

// Upstream defaults, from SetDefaults_KubeProxyConfiguration
// (k8s.io/kubernetes/pkg/proxy/apis/config/v1alpha1/defaults.go, v1.36.4),
// k8s.io/kubernetes/pkg/cluster/ports and pkg/kubelet/qos.
//
// metricsBindAddress: upstream's defaulting gives 127.0.0.1:10249 (IPv4) or
// [::1]:10249 (IPv6 bindAddress), i.e. loopback only. kubeadm does not
// change that: the ConfigMap it writes has metricsBindAddress: "" and so ends
// up on loopback too; some installers write "0.0.0.0:10249" explicitly so
// Prometheus can scrape from outside the node. svclab follows upstream
// defaulting (loopback): a lab that wants the metrics reachable from
// another namespace says so in its ConfigMap, as a real cluster would have to.
//
// iptables.localhostNodePorts: upstream defaults it to true, so node ports
// answer on 127.0.0.1 (the proxy sets route_localnet=1 for that and adds the
// KUBE-FIREWALL rule that guards it); see Config.IPv4LocalhostNodePorts.
const (
	DefaultMasqueradeBit                  = 14
	DefaultSyncPeriod                     = 30 * time.Second
	DefaultMinSyncPeriod                  = 1 * time.Second
	DefaultBindAddress                    = "0.0.0.0"
	ProxyStatusPort                       = 10249 // metrics and /proxyMode
	ProxyHealthzPort                      = 10256 // /healthz and /livez
	DefaultMetricsAddressV4               = "127.0.0.1"
	DefaultMetricsAddressV6               = "::1"
	DefaultHealthzAddressV4               = "0.0.0.0"
	DefaultHealthzAddressV6               = "::"
	DefaultLocalhostNodePorts             = true
	DefaultOOMScoreAdj                    = -999 // qos.KubeProxyOOMScoreAdj
	DefaultConntrackMaxPerCore            = 32 * 1024
	DefaultConntrackMin                   = 128 * 1024
	DefaultConntrackTCPEstablishedTimeout = 24 * time.Hour
	DefaultConntrackTCPCloseWaitTimeout   = 1 * time.Hour
	DefaultConfigSyncPeriod               = 15 * time.Minute
	DefaultContentType                    = "application/vnd.kubernetes.protobuf"
	DefaultQPS                            = 5.0
	DefaultBurst                          = 10
)

// applyDefaults fills unset fields of kp exactly as upstream's
// SetDefaults_KubeProxyConfiguration does, field by field and in its order,
// including the fields svclab does not act on (oomScoreAdj, conntrack,
// clientConnection, logging …): the defaulted document (Config.Versioned)
// is the one upstream's kube-proxy would run with.
func applyDefaults(kp *kubeproxyconfigv1alpha1.KubeProxyConfiguration) {
	defaultBindAddresses(kp)
	if kp.OOMScoreAdj == nil {
		kp.OOMScoreAdj = ptrTo(int32(DefaultOOMScoreAdj))
	}
	defaultModeSections(kp)
	defaultConntrack(kp)
	if kp.ConfigSyncPeriod.Duration == 0 {
		kp.ConfigSyncPeriod.Duration = DefaultConfigSyncPeriod
	}
	defaultClientConnection(kp)
	if kp.FeatureGates == nil {
		kp.FeatureGates = map[string]bool{}
	}
	logsapi.SetRecommendedLoggingConfiguration(&kp.Logging)
}

// defaultBindAddresses: bindAddress, then healthz and metrics on the
// matching family, a bare IP getting its port.
func defaultBindAddresses(kp *kubeproxyconfigv1alpha1.KubeProxyConfiguration) {
	if kp.BindAddress == "" {
		kp.BindAddress = DefaultBindAddress
	}
	healthzHost, metricsHost := defaultAddresses(kp.BindAddress)
	if kp.HealthzBindAddress == "" {
		kp.HealthzBindAddress = net.JoinHostPort(healthzHost, strconv.Itoa(ProxyHealthzPort))
	} else {
		kp.HealthzBindAddress = appendPortIfNeeded(kp.HealthzBindAddress, ProxyHealthzPort)
	}
	if kp.MetricsBindAddress == "" {
		kp.MetricsBindAddress = net.JoinHostPort(metricsHost, strconv.Itoa(ProxyStatusPort))
	} else {
		kp.MetricsBindAddress = appendPortIfNeeded(kp.MetricsBindAddress, ProxyStatusPort)
	}
}

// defaultModeSections: the iptables, ipvs and nftables sections' periods,
// masquerade bits and localhostNodePorts. Upstream defaults no
// ipvs.minSyncPeriod (0 means "sync on every change" there).
func defaultModeSections(kp *kubeproxyconfigv1alpha1.KubeProxyConfiguration) {
	defaultPeriod := func(d *metav1.Duration, def time.Duration) {
		if d.Duration == 0 {
			d.Duration = def
		}
	}
	defaultPeriod(&kp.IPTables.SyncPeriod, DefaultSyncPeriod)
	defaultPeriod(&kp.IPTables.MinSyncPeriod, DefaultMinSyncPeriod)
	if kp.IPTables.LocalhostNodePorts == nil {
		kp.IPTables.LocalhostNodePorts = ptrTo(DefaultLocalhostNodePorts)
	}
	defaultPeriod(&kp.IPVS.SyncPeriod, DefaultSyncPeriod)
	defaultPeriod(&kp.NFTables.SyncPeriod, DefaultSyncPeriod)
	defaultPeriod(&kp.NFTables.MinSyncPeriod, DefaultMinSyncPeriod)
	if kp.IPTables.MasqueradeBit == nil {
		kp.IPTables.MasqueradeBit = ptrTo(int32(DefaultMasqueradeBit))
	}
	if kp.NFTables.MasqueradeBit == nil {
		kp.NFTables.MasqueradeBit = ptrTo(int32(DefaultMasqueradeBit))
	}
}

func defaultConntrack(kp *kubeproxyconfigv1alpha1.KubeProxyConfiguration) {
	c := &kp.Conntrack
	if c.MaxPerCore == nil {
		c.MaxPerCore = ptrTo(int32(DefaultConntrackMaxPerCore))
	}
	if c.Min == nil {
		c.Min = ptrTo(int32(DefaultConntrackMin))
	}
	if c.TCPEstablishedTimeout == nil {
		c.TCPEstablishedTimeout = &metav1.Duration{Duration: DefaultConntrackTCPEstablishedTimeout}
	}
	if c.TCPCloseWaitTimeout == nil {
		c.TCPCloseWaitTimeout = &metav1.Duration{Duration: DefaultConntrackTCPCloseWaitTimeout}
	}
}

func defaultClientConnection(kp *kubeproxyconfigv1alpha1.KubeProxyConfiguration) {
	c := &kp.ClientConnection
	if c.ContentType == "" {
		c.ContentType = DefaultContentType
	}
	if c.QPS == 0 {
		c.QPS = DefaultQPS
	}
	if c.Burst == 0 {
		c.Burst = DefaultBurst
	}
}

// defaultAddresses returns the healthz and metrics hosts for a bindAddress,
// as upstream's getDefaultAddresses: an IPv4 address (in upstream's sloppy
// parsing, which allows leading zeros, and including ::ffff:a.b.c.d) gives
// 0.0.0.0 and 127.0.0.1; anything else, an IPv6 address or even an
// unparsable one (left for validation), gives :: and ::1.
func defaultAddresses(bindAddress string) (healthzHost, metricsHost string) {
	if netutils.ParseIPSloppy(bindAddress).To4() != nil {
		return DefaultHealthzAddressV4, DefaultMetricsAddressV4
	}
	return DefaultHealthzAddressV6, DefaultMetricsAddressV6
}

// appendPortIfNeeded turns a bare IP into IP:port, as upstream's
// proxyutil.AppendPortIfNeeded; anything else is returned unchanged for
// validation to judge.
func appendPortIfNeeded(addr string, port int) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	if netutils.ParseIPSloppy(addr) == nil {
		return addr
	}
	return net.JoinHostPort(addr, strconv.Itoa(port))
}

func ptrTo[T any](v T) *T { return &v }
