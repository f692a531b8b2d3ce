package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
)

// workspace is one scenario's namespace.
type workspace struct {
	t  *Target
	ns string
}

func (w *workspace) Name() string                     { return w.ns }
func (w *workspace) Delete(ctx context.Context) error { return w.t.deleteNamespace(ctx, w.ns) }
func (w *workspace) res() *resources.Resources        { return w.t.res.WithNamespace(w.ns) }

// Apply creates the objects, then waits for the Deployments and pods to be
// ready, for the Services' EndpointSlices to list every ready pod, and
// for every node's proxy to have synced its rules since.
func (w *workspace) Apply(ctx context.Context, manifests string) error {
	if err := w.t.apply(ctx, w.ns, manifests); err != nil {
		return fmt.Errorf("namespace %s: %w", w.ns, err)
	}
	if err := w.t.poll(ctx, "the pods of "+w.ns+" ready", w.podsReady(ctx)); err != nil {
		return err
	}
	if err := w.t.poll(ctx, "the EndpointSlices of "+w.ns, w.endpointsReady(ctx)); err != nil {
		return err
	}
	return w.waitProxySync(ctx)
}

func (w *workspace) podsReady(ctx context.Context) func() (bool, error) {
	return func() (bool, error) {
		var deps appsv1.DeploymentList
		if err := w.res().List(ctx, &deps); err != nil {
			return false, err
		}
		want := 0
		for _, d := range deps.Items {
			r := int(*d.Spec.Replicas)
			if int(d.Status.ReadyReplicas) != r || int(d.Status.UpdatedReplicas) != r || int(d.Status.Replicas) != r {
				return false, fmt.Errorf("deployment %s: %d/%d ready", d.Name, d.Status.ReadyReplicas, r)
			}
			want += r
		}
		var pods corev1.PodList
		if err := w.res().List(ctx, &pods); err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				return false, fmt.Errorf("pod %s is terminating", p.Name)
			}
			if !podReady(&p) {
				return false, fmt.Errorf("pod %s is %s, not ready", p.Name, p.Status.Phase)
			}
		}
		return len(pods.Items) >= want, nil
	}
}

func (w *workspace) endpointsReady(ctx context.Context) func() (bool, error) {
	return func() (bool, error) {
		var svcs corev1.ServiceList
		if err := w.res().List(ctx, &svcs); err != nil {
			return false, err
		}
		for _, s := range svcs.Items {
			pods, err := w.selected(ctx, s.Spec.Selector)
			if err != nil {
				return false, err
			}
			var slices discoveryv1.EndpointSliceList
			if err := w.res().List(ctx, &slices, resources.WithLabelSelector(discoveryv1.LabelServiceName+"="+s.Name)); err != nil {
				return false, err
			}
			ready := map[string]bool{}
			for _, sl := range slices.Items {
				for _, e := range sl.Endpoints {
					if e.Conditions.Ready != nil && *e.Conditions.Ready {
						for _, a := range e.Addresses {
							ready[a] = true
						}
					}
				}
			}
			for _, p := range pods {
				if !ready[p.Status.PodIP] {
					return false, fmt.Errorf("service %s: pod %s (%s) not a ready endpoint yet", s.Name, p.Name, p.Status.PodIP)
				}
			}
		}
		return true, nil
	}
}

// waitProxySync waits until every node's proxy has applied every change
// it was told of: its last rules sync is not older than the last change
// it queued (kubeproxy_sync_proxy_rules_last_timestamp_seconds ≥
// …_last_queued_timestamp_seconds on :10249; kube-proxy and svclab's
// proxy both export them). The informers deliver a change within
// milliseconds; a second's grace first makes sure the proxies saw the
// last one before their state is read.
func (w *workspace) waitProxySync(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Second):
	}
	nodes, err := w.t.nodes(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		err := w.t.poll(ctx, "the proxy on "+n.Name+" to sync", func() (bool, error) {
			out, err := w.t.onNode(ctx, n.Name, &selfexec.NodeGet{URL: "http://127.0.0.1:10249/metrics"})
			if err != nil {
				return false, err
			}
			synced, ok := metric(out, "kubeproxy_sync_proxy_rules_last_timestamp_seconds")
			queued, ok2 := metric(out, "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds")
			if !ok || !ok2 {
				return false, fmt.Errorf("/metrics lacks kubeproxy_sync_proxy_rules_last_timestamp_seconds or …_last_queued_timestamp_seconds")
			}
			if synced < queued {
				return false, fmt.Errorf("last sync %.3f before the last queued change %.3f", synced, queued)
			}
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// metric is the largest value of a metric in Prometheus text, over its
// label sets (kube-proxy labels this one with ip_family).
func metric(text, name string) (float64, bool) {
	best, found := 0.0, false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || (f[0] != name && !strings.HasPrefix(f[0], name+"{")) {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil && (!found || v > best) {
			best, found = v, true
		}
	}
	return best, found
}

func (w *workspace) selected(ctx context.Context, selector map[string]string) ([]corev1.Pod, error) {
	if len(selector) == 0 {
		return nil, nil
	}
	var parts []string
	for k, v := range selector {
		parts = append(parts, k+"="+v)
	}
	var pods corev1.PodList
	if err := w.res().List(ctx, &pods, resources.WithLabelSelector(strings.Join(parts, ","))); err != nil {
		return nil, err
	}
	return pods.Items, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (w *workspace) Service(ctx context.Context, name string) (*corev1.Service, error) {
	var s corev1.Service
	if err := w.res().Get(ctx, name, w.ns, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func (w *workspace) Pods(ctx context.Context, app string) ([]corev1.Pod, error) {
	pods, err := w.selected(ctx, map[string]string{"app": app})
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods, err
}

func (w *workspace) Nodes(ctx context.Context) ([]kit.Node, error) { return w.t.nodes(ctx) }

// Traffic runs svclab's traffic client in the pod, or in the node agent
// (the node's host network: outside the pod network) of from.Node.
func (w *workspace) Traffic(ctx context.Context, from kit.Client, target netip.AddrPort, n int) (*traffic.Result, error) {
	run := &selfexec.Traffic{Raw: true, Options: traffic.Options{
		Target: target.String(), Connections: n, Timeout: 10 * time.Second, Deadline: 10 * time.Minute,
	}}
	var out string
	var err error
	if from.Pod != "" {
		out, err = w.t.exec(ctx, w.ns, from.Pod, "", selfexec.Argv("/svclab", run)...)
	} else {
		out, err = w.t.onNode(ctx, from.Node, run)
	}
	if err != nil {
		return nil, err
	}
	var res traffic.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return nil, fmt.Errorf("traffic result: %w", err)
	}
	return &res, nil
}

func (w *workspace) IPTablesSave(ctx context.Context, node, table string, counters bool) (string, error) {
	return w.t.iptablesSave(ctx, node, table, counters)
}

func (w *workspace) NFTables(ctx context.Context, node string) (string, error) {
	return w.t.onNode(ctx, node, &selfexec.NodeRun{Argv: []string{"nft", "-j", "list", "table", "ip", "kube-proxy"}})
}

func (w *workspace) Conntrack(ctx context.Context, node string) ([]conntrack.Flow, error) {
	out, err := w.t.onNode(ctx, node, &selfexec.NodeConntrack{})
	if err != nil {
		return nil, err
	}
	var flows []conntrack.Flow
	return flows, json.Unmarshal([]byte(out), &flows)
}

func (w *workspace) RouteSource(ctx context.Context, node string, dst netip.Addr) (netip.Addr, error) {
	out, err := w.t.onNode(ctx, node, &selfexec.NodeRouteSource{IP: dst.String()})
	if err != nil {
		return netip.Addr{}, err
	}
	return netip.ParseAddr(strings.TrimSpace(out))
}

func (w *workspace) ProxyMode(ctx context.Context, node string) (string, error) {
	out, err := w.t.onNode(ctx, node, &selfexec.NodeGet{URL: "http://127.0.0.1:10249/proxyMode"})
	return strings.TrimSpace(out), err
}

// ProxyModes: svclab's proxy (its image says svclab) runs iptables;
// kube-proxy iptables and nftables; both ipvs where the nodes' kernel has
// IP_VS.
func (w *workspace) ProxyModes(ctx context.Context) ([]string, error) {
	pods, err := w.t.proxyPods(ctx)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("no pods labelled %s in kube-system", proxyLabel)
	}
	modes := []string{"iptables", "nftables"}
	if strings.Contains(pods[0].Spec.Containers[0].Image, "svclab") {
		modes = []string{"iptables"}
	}
	if _, err := w.t.onNode(ctx, pods[0].Spec.NodeName, &selfexec.NodeRun{Argv: []string{"test", "-e", "/proc/net/ip_vs"}}); err == nil {
		modes = append(modes, "ipvs")
	}
	return modes, nil
}

// SwitchProxyMode: seed 001's steps, with the API.
func (w *workspace) SwitchProxyMode(ctx context.Context, mode string) error {
	if err := w.t.switchProxyMode(ctx, mode); err != nil {
		return err
	}
	nodes, err := w.t.nodes(ctx)
	if err != nil {
		return err
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	if err := kit.WaitProxyMode(ctx, w, names, mode, w.t.opts.ReadyTimeout); err != nil {
		return err
	}
	return w.waitProxySync(ctx)
}
