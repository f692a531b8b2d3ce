package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

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
	// family is the IP family whose evidence the workspace reads ("" is
	// IPv4).
	family corev1.IPFamily
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
	if err := w.t.poll(ctx, "the pods of "+w.ns+" ready", w.t.failOnPodProblems(ctx, w.ns, w.podsReady(ctx))); err != nil {
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
				for _, ip := range endpointAddrs(&s, &p) {
					if !ready[ip] {
						return false, fmt.Errorf("service %s: pod %s (%s) not a ready endpoint yet", s.Name, p.Name, ip)
					}
				}
			}
		}
		return true, nil
	}
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

// Nodes are the target's nodes, each with its pod range.
func (w *workspace) Nodes(ctx context.Context) ([]kit.Node, error) {
	nodes, err := w.t.nodes(ctx)
	if err != nil {
		return nil, err
	}
	var list corev1.NodeList
	if err := w.t.res.List(ctx, &list); err != nil {
		return nil, err
	}
	cidrs := map[string]corev1.NodeSpec{}
	for _, n := range list.Items {
		cidrs[n.Name] = n.Spec
	}
	for i := range nodes {
		spec := cidrs[nodes[i].Name]
		nodes[i].PodCIDR, _ = netip.ParsePrefix(spec.PodCIDR) // invalid when the node has none
		for _, c := range spec.PodCIDRs {
			if p, err := netip.ParsePrefix(c); err == nil {
				nodes[i].PodCIDRs = append(nodes[i].PodCIDRs, p)
			}
		}
	}
	return nodes, nil
}

// Traffic is TrafficWith n TCP connections asking /hostname.
func (w *workspace) Traffic(ctx context.Context, from kit.Client, target netip.AddrPort, n int) (*traffic.Result, error) {
	return w.TrafficWith(ctx, from, target, kit.TrafficOptions{Connections: n})
}

func (w *workspace) IPTablesSave(ctx context.Context, node, table string, counters bool) (string, error) {
	return w.t.iptablesSave(ctx, node, table, counters, w.family)
}

func (w *workspace) NFTables(ctx context.Context, node string) (string, error) {
	return w.t.onNode(ctx, node, &selfexec.NodeRun{Argv: []string{"nft", "-j", "list", "table", kit.NFTFamily(w.family), "kube-proxy"}})
}

// Conntrack: the node agent's netlink dump (IPv4), or in an IPv6
// workspace the node's own `conntrack -L -f ipv6`.
func (w *workspace) Conntrack(ctx context.Context, node string) ([]conntrack.Flow, error) {
	if kit.IsIPv6(w.family) {
		out, err := w.t.onNode(ctx, node, &selfexec.NodeRun{Argv: []string{"conntrack", "-L", "-f", "ipv6"}})
		if err != nil {
			return nil, err
		}
		flows, err := kit.ParseConntrackList(out)
		return kit.FlowsOfFamily(flows, w.family), err
	}
	out, err := w.t.onNode(ctx, node, &selfexec.NodeConntrack{})
	if err != nil {
		return nil, err
	}
	var flows []conntrack.Flow
	if err := json.Unmarshal([]byte(out), &flows); err != nil {
		return nil, err
	}
	return kit.FlowsOfFamily(flows, w.family), nil
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

// ProxyModes: kube-proxy runs iptables and nftables, svclab's proxy
// (as its kind clusters run it) iptables; both ipvs where the nodes'
// kernel has IP_VS. Another proxy runs none svclab can switch to.
func (w *workspace) ProxyModes(ctx context.Context) ([]string, error) {
	p, err := w.t.Proxy(ctx)
	if err != nil {
		return nil, err
	}
	var modes []string
	switch p.Kind {
	case kit.ProxyKubeProxy:
		modes = []string{"iptables", "nftables"}
	case kit.ProxySvclab:
		modes = []string{"iptables"}
	default:
		return nil, nil
	}
	nodes, err := w.t.nodes(ctx)
	if err != nil {
		return nil, err
	}
	if len(nodes) > 0 {
		if _, err := w.t.onNode(ctx, nodes[0].Name, &selfexec.NodeRun{Argv: []string{"test", "-e", "/proc/net/ip_vs"}}); err == nil {
			modes = append(modes, "ipvs")
		}
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

// endpointAddrs are the addresses of pod that svc's EndpointSlices must
// list as ready: its pod IP of each of the Service's families (both of a
// dual-stack Service's), or status.podIP where the Service or the pod
// names no family.
func endpointAddrs(svc *corev1.Service, pod *corev1.Pod) []string {
	if len(svc.Spec.IPFamilies) == 0 || len(pod.Status.PodIPs) == 0 {
		return []string{pod.Status.PodIP}
	}
	var out []string
	for _, ip := range pod.Status.PodIPs {
		a, err := netip.ParseAddr(ip.IP)
		if err == nil && slices.Contains(svc.Spec.IPFamilies, kit.FamilyOf(a)) {
			out = append(out, ip.IP)
		}
	}
	if len(out) == 0 {
		return []string{pod.Status.PodIP}
	}
	return out
}
