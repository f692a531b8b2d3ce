package kube

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
)

// kube-proxy's sync metrics (pkg/proxy/metrics), which svclab's proxy
// exports too (the pending gauges only kube-proxy).
const (
	metricLastSync          = "kubeproxy_sync_proxy_rules_last_timestamp_seconds"
	metricLastQueued        = "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds"
	metricEndpointsPending  = "kubeproxy_sync_proxy_rules_endpoint_changes_pending"
	metricServicesPending   = "kubeproxy_sync_proxy_rules_service_changes_pending"
	probeConnectionTimeout  = 2 * time.Second
	probeMissProbability    = 1e-3
	probeLeastConnections   = 8
	netexecHostnameResponds = "netexec"
)

// waitProxySync waits until every node's proxy has programmed the
// workspace's Services as the API server has them now.
//
// Why not kube-proxy's timestamps alone. A proxy sets
// …_last_queued_timestamp_seconds when it is told of a change and
// …_last_timestamp_seconds when a sync ends; synced ≥ queued says that
// nothing it was told of is still waiting. It does not say it has been
// told of the last change: the watch may deliver the final EndpointSlice
// update a few milliseconds after this process saw it, and until then the
// older values satisfy synced ≥ queued (hence the second of grace this
// wait used to sleep first). No timestamp closes that gap: one taken
// before Apply ("queued ≥ t0") is met by the Service's own creation,
// seconds before the pods are ready; one taken after the endpoints are
// seen ("synced ≥ t1") may be met only by the next periodic resync (30 s)
// when the update arrived just before t1; and the EndpointSlice's
// last-change-trigger-time is the control plane's clock, not the node's.
//
// So the wait reads the state itself: from every node (the node agent, in
// the host network) each checkable Service answers through its cluster IP
// from exactly its ready endpoints (proxySyncProbe) — which the node's
// proxy can only do once it has programmed the last change. Where the
// proxy exports the metrics (Proxy.Metrics), it also waits until nothing
// it was told of is pending: synced ≥ queued and, where exported (kube-
// proxy), no endpoint or service change pending; that covers what no
// connection shows (a Service without endpoints, one with session
// affinity). A Service that cannot be checked by connections is named in
// the progress output.
func (w *workspace) waitProxySync(ctx context.Context) error {
	p, err := w.t.Proxy(ctx)
	if err != nil {
		return err
	}
	nodes, err := w.t.nodes(ctx)
	if err != nil {
		return err
	}
	probes, unchecked, err := w.proxySyncProbes(ctx)
	if err != nil {
		return err
	}
	if len(unchecked) > 0 {
		fmt.Fprintf(w.t.opts.Out, "%s: not checked by connections after the change: %s\n", w.ns, strings.Join(unchecked, "; "))
	}
	for _, n := range nodes {
		for _, probe := range probes {
			expected := probe.expectedFrom(n.Name)
			if len(expected) == 0 {
				continue
			}
			what := fmt.Sprintf("Service %s/%s to answer from %v through %s from node %s", w.ns, probe.service, expected, probe.target, n.Name)
			if err := w.t.poll(ctx, what, func() (bool, error) { return w.answersExactly(ctx, n.Name, probe.target, expected) }); err != nil {
				return err
			}
		}
		if p.Metrics {
			if err := w.t.poll(ctx, "the proxy on "+n.Name+" to sync", func() (bool, error) { return w.t.proxySettled(ctx, n.Name) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// proxySettled says whether the proxy on node has programmed every change
// it was told of.
func (t *Target) proxySettled(ctx context.Context, node string) (bool, error) {
	out, err := t.onNode(ctx, node, &selfexec.NodeGet{URL: proxyMetricURL})
	if err != nil {
		return false, err
	}
	synced, ok := metric(out, metricLastSync)
	queued, ok2 := metric(out, metricLastQueued)
	if !ok || !ok2 {
		return false, fmt.Errorf("/metrics lacks %s or %s", metricLastSync, metricLastQueued)
	}
	if synced < queued {
		return false, fmt.Errorf("last sync %.3f before the last queued change %.3f", synced, queued)
	}
	for _, pending := range []string{metricEndpointsPending, metricServicesPending} {
		if v, ok := metric(out, pending); ok && v > 0 {
			return false, fmt.Errorf("%s is %g", pending, v)
		}
	}
	return true, nil
}

// metric is the largest value of a gauge or counter in Prometheus text
// (read with prometheus/common's parser), over its label sets
// (kube-proxy labels this one with ip_family).
func metric(text, name string) (float64, bool) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return 0, false
	}
	family, ok := families[name]
	if !ok {
		return 0, false
	}
	best, found := 0.0, false
	for _, m := range family.GetMetric() {
		var v float64
		switch {
		case m.GetGauge() != nil:
			v = m.GetGauge().GetValue()
		case m.GetCounter() != nil:
			v = m.GetCounter().GetValue()
		case m.GetUntyped() != nil:
			v = m.GetUntyped().GetValue()
		default:
			continue
		}
		if !found || v > best {
			best, found = v, true
		}
	}
	return best, found
}

// proxySyncProbe is one Service as connections check it: its cluster IP
// and first TCP port, and its ready endpoints (pod name → node).
type proxySyncProbe struct {
	service string
	target  netip.AddrPort
	// endpoints are the ready endpoints' pods and their nodes.
	endpoints map[string]string
	// localOnly: internalTrafficPolicy Local, a node reaches only its own.
	localOnly bool
}

// expectedFrom are the pods that answer connections from node, sorted.
func (p proxySyncProbe) expectedFrom(node string) []string {
	var out []string
	for pod, n := range p.endpoints {
		if !p.localOnly || n == node {
			out = append(out, pod)
		}
	}
	sort.Strings(out)
	return out
}

// proxySyncProbes are the workspace's Services connections can check — a
// cluster IP, a TCP port, no session affinity, ready endpoints that are
// netexec pods (GET /hostname answers the pod's name) — and the others,
// each with why.
func (w *workspace) proxySyncProbes(ctx context.Context) ([]proxySyncProbe, []string, error) {
	var svcs corev1.ServiceList
	if err := w.res().List(ctx, &svcs); err != nil {
		return nil, nil, err
	}
	netexec, err := w.netexecPods(ctx)
	if err != nil {
		return nil, nil, err
	}
	var probes []proxySyncProbe
	var unchecked []string
	for _, s := range svcs.Items {
		for _, clusterIP := range clusterIPs(&s) {
			probe, why, err := w.proxySyncProbe(ctx, &s, clusterIP, netexec)
			switch {
			case err != nil:
				return nil, nil, err
			case why != "":
				unchecked = append(unchecked, s.Name+": "+why)
			default:
				probes = append(probes, probe)
			}
		}
	}
	return probes, unchecked, nil
}

// clusterIPs are a Service's cluster IPs, one per family (spec.clusterIPs;
// spec.clusterIP where that is empty).
func clusterIPs(s *corev1.Service) []string {
	if len(s.Spec.ClusterIPs) > 0 {
		return s.Spec.ClusterIPs
	}
	return []string{s.Spec.ClusterIP}
}

// proxySyncProbe is the probe of one Service through one of its cluster
// IPs (each family's proxy programs its own), or why it has none; netexec
// says which of the workspace's pods run netexec.
func (w *workspace) proxySyncProbe(ctx context.Context, s *corev1.Service, clusterIP string, netexec map[string]bool) (proxySyncProbe, string, error) {
	ip, err := netip.ParseAddr(clusterIP)
	if err != nil {
		return proxySyncProbe{}, "no cluster IP", nil
	}
	if s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		return proxySyncProbe{}, "session affinity: one client reaches one endpoint", nil
	}
	port, portName := -1, ""
	for _, p := range s.Spec.Ports {
		if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
			port, portName = int(p.Port), p.Name
			break
		}
	}
	if port < 0 {
		return proxySyncProbe{}, "no TCP port", nil
	}
	endpoints, err := w.readyEndpoints(ctx, s.Name, portName)
	if err != nil {
		return proxySyncProbe{}, "", err
	}
	if len(endpoints) == 0 {
		return proxySyncProbe{}, "no ready endpoints", nil
	}
	for pod := range endpoints {
		if !netexec[pod] {
			return proxySyncProbe{}, "its pods do not all run netexec (/hostname)", nil
		}
	}
	local := s.Spec.InternalTrafficPolicy != nil && *s.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal
	return proxySyncProbe{service: s.Name, target: netip.AddrPortFrom(ip, uint16(port)), endpoints: endpoints, localOnly: local}, "", nil
}

// readyEndpoints are a Service's ready endpoints for its port named port
// in its EndpointSlices: the pods they point at, and their nodes. A slice
// holds the endpoints of the ports it lists (the EndpointSlice controller
// puts pods that resolve a named target port differently in different
// slices), so only slices listing that port count.
func (w *workspace) readyEndpoints(ctx context.Context, service, port string) (map[string]string, error) {
	var list discoveryv1.EndpointSliceList
	if err := w.res().List(ctx, &list, resources.WithLabelSelector(discoveryv1.LabelServiceName+"="+service)); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, sl := range list.Items {
		if !slices.ContainsFunc(sl.Ports, func(p discoveryv1.EndpointPort) bool { return ptr.Deref(p.Name, "") == port }) {
			continue
		}
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready == nil || !*e.Conditions.Ready || e.TargetRef == nil || e.TargetRef.Kind != "Pod" {
				continue
			}
			node := ""
			if e.NodeName != nil {
				node = *e.NodeName
			}
			out[e.TargetRef.Name] = node
		}
	}
	return out, nil
}

// netexecPods are the workspace's pods that run netexec, by name.
func (w *workspace) netexecPods(ctx context.Context) (map[string]bool, error) {
	var pods corev1.PodList
	if err := w.res().List(ctx, &pods); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			if slices.Contains(append(append([]string{}, c.Command...), c.Args...), netexecHostnameResponds) {
				out[p.Name] = true
			}
		}
	}
	return out, nil
}

// answersExactly says whether connections from node's host network to
// target all answer, and from exactly the expected pods: enough of them
// that each pod is missed with probability below probeMissProbability
// (k·(1−1/k)^n ≤ k·e^(−n/k)), so a round that misses one is a retry, not
// a verdict.
func (w *workspace) answersExactly(ctx context.Context, node string, target netip.AddrPort, expected []string) (bool, error) {
	k := float64(len(expected))
	n := max(probeLeastConnections, int(math.Ceil(k*math.Log(k/probeMissProbability))))
	res, err := w.TrafficWith(ctx, kit.Client{Node: node}, target, kit.TrafficOptions{Connections: n, Timeout: probeConnectionTimeout})
	if err != nil {
		return false, err
	}
	got := answeredBy(res)
	if res.Succeeded != n || !slices.Equal(got, expected) {
		return false, fmt.Errorf("%s", kit.DescribeTraffic(res))
	}
	return true, nil
}

// answeredBy are the backends that answered, sorted.
func answeredBy(res *traffic.Result) []string {
	var out []string
	for b := range res.Backends {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}
