package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metric names. Those starting kubeproxy_ are upstream's
// (k8s.io/kubernetes/pkg/proxy/metrics), with the same labels and buckets,
// so dashboards and alerts written for kube-proxy read svclab too. Those
// starting svclab_ have no upstream counterpart.
const (
	MetricSyncDuration        = "kubeproxy_sync_proxy_rules_duration_seconds"
	MetricLastSyncTimestamp   = "kubeproxy_sync_proxy_rules_last_timestamp_seconds"
	MetricLastQueuedTimestamp = "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds"
	MetricRestoreFailures     = "kubeproxy_sync_proxy_rules_iptables_restore_failures_total"
	MetricIPTablesRules       = "kubeproxy_sync_proxy_rules_iptables_total"
	MetricHealthzResponses    = "kubeproxy_proxy_healthz_total"
	MetricLivezResponses      = "kubeproxy_proxy_livez_total"
	MetricServices            = "svclab_proxy_services"
	MetricEndpoints           = "svclab_proxy_endpoints"
)

// proxyMetrics holds the collectors of one Server, registered in its own
// registry (never the global default one, so tests and several proxies in
// one process do not collide).
type proxyMetrics struct {
	registry *prometheus.Registry

	syncDuration        *prometheus.HistogramVec
	lastSyncTimestamp   *prometheus.GaugeVec
	lastQueuedTimestamp *prometheus.GaugeVec
	restoreFailures     *prometheus.CounterVec
	iptablesRules       *prometheus.GaugeVec
	healthzResponses    *prometheus.CounterVec
	livezResponses      *prometheus.CounterVec
	services            prometheus.Gauge
	endpoints           prometheus.Gauge
}

func newProxyMetrics(ipFamilies ...string) *proxyMetrics {
	m := &proxyMetrics{
		registry: prometheus.NewRegistry(),
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    MetricSyncDuration,
			Help:    "SyncProxyRules latency in seconds",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"ip_family"}),
		lastSyncTimestamp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricLastSyncTimestamp,
			Help: "The last time proxy rules were successfully synced",
		}, []string{"ip_family"}),
		lastQueuedTimestamp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricLastQueuedTimestamp,
			Help: "The last time a sync of proxy rules was queued",
		}, []string{"ip_family"}),
		restoreFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRestoreFailures,
			Help: "Cumulative proxy iptables restore failures",
		}, []string{"ip_family"}),
		iptablesRules: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricIPTablesRules,
			Help: "Total number of iptables rules owned by kube-proxy",
		}, []string{"table", "ip_family"}),
		healthzResponses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricHealthzResponses,
			Help: "Cumulative proxy healthz HTTP status",
		}, []string{"code"}),
		livezResponses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricLivezResponses,
			Help: "Cumulative proxy livez HTTP status",
		}, []string{"code"}),
		services: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricServices,
			Help: "Number of service ports the proxy programmed in its last successful sync",
		}),
		endpoints: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricEndpoints,
			Help: "Number of endpoints the proxy programmed in its last successful sync",
		}),
	}
	m.registry.MustRegister(
		m.syncDuration, m.lastSyncTimestamp, m.lastQueuedTimestamp, m.restoreFailures,
		m.iptablesRules, m.healthzResponses, m.livezResponses, m.services, m.endpoints,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Create the per-family series up front so a scrape before the first
	// sync shows them at zero rather than not at all.
	for _, ipFamily := range ipFamilies {
		m.syncDuration.WithLabelValues(ipFamily)
		m.lastSyncTimestamp.WithLabelValues(ipFamily)
		m.lastQueuedTimestamp.WithLabelValues(ipFamily)
		m.restoreFailures.WithLabelValues(ipFamily)
	}
	return m
}
