// Package server serves svclab proxy's HTTP endpoints the way upstream
// kube-proxy does, so the same probes, curls and scrapes work against it:
//
// On the metrics address (metricsBindAddress, default 127.0.0.1:10249):
//
//	/proxyMode  the proxy mode as plain text ("iptables"), no newline
//	/metrics    Prometheus text format from a private registry: upstream's
//	            kubeproxy_sync_proxy_rules_* metrics plus a few svclab_proxy_*
//	/healthz    "ok": the metrics server itself is up (upstream installs the
//	            same generic handler there)
//
// On the healthz address (healthzBindAddress, default 0.0.0.0:10256):
//
//	/healthz    200 or 503 with upstream's JSON (lastUpdated, currentTime,
//	            healthy, status per IP family) plus nodeName and, when
//	            unhealthy, why
//	/livez      the same verdict and body
//
// The sync loop reports to a Server through QueuedUpdate, SyncSucceeded,
// SyncFailed and SetUnhealthy; see health.go for the rules that turn those
// calls into a verdict.
package server
