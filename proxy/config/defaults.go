package config

import (
	"net"
	"net/netip"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
)

// Upstream defaults, from SetDefaults_KubeProxyConfiguration
// (k8s.io/kubernetes/pkg/proxy/apis/config/v1alpha1/defaults.go) and
// k8s.io/kubernetes/pkg/cluster/ports.
//
// metricsBindAddress: upstream's defaulting gives 127.0.0.1:10249 (IPv4) or
// [::1]:10249 (IPv6 bindAddress), i.e. loopback only. kubeadm does not
// change that: the ConfigMap it writes has metricsBindAddress: "" and so ends
// up on loopback too; some installers write "0.0.0.0:10249" explicitly so
// Prometheus can scrape from outside the node. svclab follows upstream
// defaulting (loopback): a lab that wants the metrics reachable from
// another namespace says so in its ConfigMap, as a real cluster would have to.
const (
	DefaultMasqueradeBit    = 14
	DefaultSyncPeriod       = 30 * time.Second
	DefaultMinSyncPeriod    = 1 * time.Second
	DefaultBindAddress      = "0.0.0.0"
	ProxyStatusPort         = 10249 // metrics and /proxyMode
	ProxyHealthzPort        = 10256 // /healthz and /livez
	DefaultMetricsAddressV4 = "127.0.0.1"
	DefaultMetricsAddressV6 = "::1"
	DefaultHealthzAddressV4 = "0.0.0.0"
	DefaultHealthzAddressV6 = "::"
)

// applyDefaults fills unset fields of kp the way upstream does, for the
// fields this package reads. Fields svclab ignores are left as decoded.
func applyDefaults(kp *kubeproxyconfigv1alpha1.KubeProxyConfiguration) {
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

	defaultPeriods := func(sync, minSync *metav1.Duration) {
		if sync.Duration == 0 {
			sync.Duration = DefaultSyncPeriod
		}
		if minSync.Duration == 0 {
			minSync.Duration = DefaultMinSyncPeriod
		}
	}
	defaultPeriods(&kp.IPTables.SyncPeriod, &kp.IPTables.MinSyncPeriod)
	defaultPeriods(&kp.NFTables.SyncPeriod, &kp.NFTables.MinSyncPeriod)
	if kp.IPVS.SyncPeriod.Duration == 0 { // upstream defaults no ipvs.minSyncPeriod
		kp.IPVS.SyncPeriod.Duration = DefaultSyncPeriod
	}

	if kp.IPTables.MasqueradeBit == nil {
		bit := int32(DefaultMasqueradeBit)
		kp.IPTables.MasqueradeBit = &bit
	}
	if kp.NFTables.MasqueradeBit == nil {
		bit := int32(DefaultMasqueradeBit)
		kp.NFTables.MasqueradeBit = &bit
	}
	if kp.IPTables.LocalhostNodePorts == nil {
		yes := true
		kp.IPTables.LocalhostNodePorts = &yes
	}
}

// defaultAddresses returns the healthz and metrics hosts for a bindAddress:
// IPv4 (or unparsable, left for validation) gives 0.0.0.0 and 127.0.0.1,
// IPv6 gives :: and ::1.
func defaultAddresses(bindAddress string) (healthzHost, metricsHost string) {
	if ip, err := netip.ParseAddr(bindAddress); err == nil && ip.Is6() && !ip.Is4In6() {
		return DefaultHealthzAddressV6, DefaultMetricsAddressV6
	}
	return DefaultHealthzAddressV4, DefaultMetricsAddressV4
}

// appendPortIfNeeded turns a bare IP into IP:port, as upstream's
// proxyutil.AppendPortIfNeeded; anything else is returned unchanged for
// validation to judge.
func appendPortIfNeeded(addr string, port int) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	if _, err := netip.ParseAddr(addr); err != nil {
		return addr
	}
	return net.JoinHostPort(addr, strconv.Itoa(port))
}
