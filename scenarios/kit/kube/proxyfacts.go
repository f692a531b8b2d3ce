package kube

import (
	"context"
	"fmt"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/scenarios/kit"
)

// The proxy's status port on every node: /proxyMode and /metrics
// (kube-proxy's metricsBindAddress default, 127.0.0.1:10249).
const (
	proxyModeURL   = "http://127.0.0.1:10249/proxyMode"
	proxyMetricURL = "http://127.0.0.1:10249/metrics"
)

// proxyFactsCache holds what (*Target).Proxy found, once per run.
type proxyFactsCache struct {
	mu        sync.Mutex
	done      bool
	proxy     kit.Proxy
	daemonSet *appsv1.DaemonSet
}

// Proxy is what proxies Services on the cluster (Discover), with the mode
// and metrics as the nodes show them: /proxyMode through the node agent
// when it answers, else the node's tables (IPVS virtual servers, table ip
// kube-proxy, KUBE-SERVICES), else the configuration's. Found once per
// run; an error is not kept, so a later call tries again.
func (t *Target) Proxy(ctx context.Context) (kit.Proxy, error) {
	t.proxyFacts.mu.Lock()
	defer t.proxyFacts.mu.Unlock()
	if t.proxyFacts.done {
		return t.proxyFacts.proxy, nil
	}
	d, err := Discover(ctx, t.clientset, t.opts.ProxyConfig)
	if err != nil {
		return kit.Proxy{}, err
	}
	p := d.Proxy
	nodes, err := t.nodes(ctx)
	if err != nil {
		return kit.Proxy{}, err
	}
	if p.WritesKubeProxyRules() {
		t.modeFromNodes(ctx, &p, nodes)
	}
	p.Metrics = t.metricsAnswer(ctx, nodes)
	t.proxyFacts.proxy, t.proxyFacts.daemonSet, t.proxyFacts.done = p, d.DaemonSet, true
	fmt.Fprint(t.opts.Out, p)
	return p, nil
}

// proxyDaemonSet is the DaemonSet the proxy runs as (nil when it runs
// from none: static pods, or no kube-proxy at all), for restarting its
// pods: their namespace and its selector.
func (t *Target) proxyDaemonSet(ctx context.Context) (*appsv1.DaemonSet, error) {
	if _, err := t.Proxy(ctx); err != nil {
		return nil, err
	}
	return t.proxyFacts.daemonSet, nil
}

// modeFromNodes sets p's mode from the first node that tells it:
// /proxyMode, else its tables. The configuration's mode stays when no
// node tells. The nodes come first: a ConfigMap may name a mode its
// running pods do not run (edited since they started, as a killed mode
// switch leaves it).
func (t *Target) modeFromNodes(ctx context.Context, p *kit.Proxy, nodes []kit.Node) {
	for _, n := range nodes {
		if out, err := t.onNode(ctx, n.Name, &selfexec.NodeGet{URL: proxyModeURL}); err == nil && strings.TrimSpace(out) != "" {
			p.Mode, p.ModeFrom = strings.TrimSpace(out), "/proxyMode on node "+n.Name
			return
		}
	}
	for _, n := range nodes {
		if mode, evidence := t.modeFromTables(ctx, n.Name); mode != "" {
			p.Mode, p.ModeFrom = mode, fmt.Sprintf("the tables of node %s (%s; /proxyMode does not answer)", n.Name, evidence)
			return
		}
	}
}

// modeFromTables reads the proxy's mode off a node's kernel, as
// kube-proxy leaves it: nftables when table ip kube-proxy exists (in
// iptables and ipvs mode kube-proxy removes it at start); else ipvs when
// KUBE-SERVICES matches the KUBE-CLUSTER-IP ipset and /proc/net/ip_vs
// lists virtual servers; else iptables when the nat table has
// KUBE-SERVICES. (IPVS virtual servers alone prove nothing: iptables mode
// leaves an earlier ipvs mode's in place.)
func (t *Target) modeFromTables(ctx context.Context, node string) (mode, evidence string) {
	if _, err := t.onNode(ctx, node, &selfexec.NodeRun{Argv: []string{"nft", "list", "table", "ip", "kube-proxy"}}); err == nil {
		return "nftables", "nft has table ip kube-proxy"
	}
	nat, err := t.iptablesSave(ctx, node, "nat", false, corev1.IPv4Protocol)
	if err != nil || !strings.Contains(nat, ":KUBE-SERVICES") {
		return "", ""
	}
	if strings.Contains(nat, "--match-set KUBE-CLUSTER-IP ") {
		if out, err := t.onNode(ctx, node, &selfexec.NodeRun{Argv: []string{"cat", "/proc/net/ip_vs"}}); err == nil && hasVirtualServers(out) {
			return "ipvs", "KUBE-SERVICES matches the KUBE-CLUSTER-IP ipset, /proc/net/ip_vs lists virtual servers"
		}
	}
	return "iptables", "iptables-save -t nat has KUBE-SERVICES"
}

// hasVirtualServers says whether /proc/net/ip_vs lists a virtual server
// (a TCP, UDP, SCTP or firewall-mark line after the header).
func hasVirtualServers(ipvs string) bool {
	for _, line := range strings.Split(ipvs, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "TCP" || f[0] == "UDP" || f[0] == "SCTP" || f[0] == "FWM") {
			return true
		}
	}
	return false
}

// metricsAnswer says whether the proxy on the first node that answers
// exports kube-proxy's sync metrics on :10249/metrics (waitProxySync
// waits on them).
func (t *Target) metricsAnswer(ctx context.Context, nodes []kit.Node) bool {
	for _, n := range nodes {
		out, err := t.onNode(ctx, n.Name, &selfexec.NodeGet{URL: proxyMetricURL})
		if err != nil {
			continue
		}
		_, synced := metric(out, metricLastSync)
		_, queued := metric(out, metricLastQueued)
		return synced && queued
	}
	return false
}
