package config

import (
	"net/netip"
	"time"

	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
)

// Config is the part of KubeProxyConfiguration that svclab's proxy honours,
// defaulted and validated, with typed fields.
type Config struct {
	// Source names the document the values came from, for error messages
	// ("kube-system/kube-proxy config.conf", or a file path).
	Source string

	// Mode is the proxy mode; an empty mode field reads as DefaultMode.
	Mode Mode

	// ClusterCIDRs is clusterCIDR split at commas: the pod ranges, at most one
	// per IP family. Empty when clusterCIDR is unset. Upstream uses it to tell
	// pod traffic from outside traffic (detectLocalMode ClusterCIDR): traffic
	// to a Service from outside these ranges is masqueraded.
	ClusterCIDRs []netip.Prefix

	// MasqueradeBit is the fwmark bit that marks packets for SNAT (0..31),
	// from iptables.masqueradeBit (nftables.masqueradeBit in nftables mode).
	MasqueradeBit int
	// MasqueradeAll SNATs all traffic to Service cluster IPs, from
	// iptables.masqueradeAll (nftables.masqueradeAll in nftables mode).
	MasqueradeAll bool

	// SyncPeriod is how often rules are resynced even when nothing changed
	// (iptables.syncPeriod; ipvs.syncPeriod or nftables.syncPeriod in those
	// modes, as upstream's conversion picks). Always > 0.
	SyncPeriod time.Duration
	// MinSyncPeriod is the least time between two syncs (iptables.minSyncPeriod,
	// or the ipvs/nftables one in those modes); 0 syncs on every change.
	// Never more than SyncPeriod.
	MinSyncPeriod time.Duration

	// LocalhostNodePorts is iptables.localhostNodePorts (upstream default
	// true): node ports also answer on 127.0.0.0/8. Whether the iptables
	// mode acts on it also depends on nodePortAddresses, see
	// IPv4LocalhostNodePorts.
	LocalhostNodePorts bool
	// NodePortAddresses is nodePortAddresses as written (CIDRs, or keywords
	// such as "primary"); empty means every local address. svclab reads it
	// only to decide IPv4LocalhostNodePorts: its renderer serves node ports
	// on every local address whatever this says.
	NodePortAddresses []string

	// MetricsBindAddress is host:port for /metrics and /proxyMode.
	MetricsBindAddress string
	// HealthzBindAddress is host:port for /healthz and /livez.
	HealthzBindAddress string

	// IPVSScheduler is ipvs.scheduler as written ("" means upstream's "rr");
	// kept for the ipvs mode, unused by iptables mode.
	IPVSScheduler string

	// Versioned is the whole decoded document with upstream defaults applied,
	// for fields Config does not carry yet. Treat it as read-only.
	Versioned *kubeproxyconfigv1alpha1.KubeProxyConfiguration
}

// MasqueradeMark is the fwmark value for MasqueradeBit (1 << bit), the mark
// KUBE-MARK-MASQ sets; upstream prints it with "%#08x" (0x004000 for bit 14).
func (c Config) MasqueradeMark() uint32 {
	return 1 << uint(c.MasqueradeBit)
}

// HealthTimeout is how long a queued update may wait for a successful sync
// before /healthz reports unhealthy: 2 × SyncPeriod, as upstream's
// NewProxyHealthServer is given.
func (c Config) HealthTimeout() time.Duration {
	return 2 * c.SyncPeriod
}
