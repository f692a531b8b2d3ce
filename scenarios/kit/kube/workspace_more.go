package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/labs/agents/dnslookup"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
)

// TrafficFromNode runs the traffic client in the node agent of node: a
// hostNetwork pod, so the node's own network namespace.
func (w *workspace) TrafficFromNode(ctx context.Context, node string, target netip.AddrPort, o kit.TrafficOptions) (*traffic.Result, error) {
	return w.TrafficWith(ctx, kit.Client{Node: node}, target, o)
}

// Outside is the node agent of the first other node: its host network is
// outside the pod network, and its connections to node's addresses come
// from another machine, as an outside client's do.
func (w *workspace) Outside(ctx context.Context, node string) (kit.Client, error) {
	nodes, err := w.t.nodes(ctx)
	if err != nil {
		return kit.Client{}, err
	}
	for _, n := range nodes {
		if n.Name != node {
			return kit.Client{Node: n.Name}, nil
		}
	}
	return kit.Client{}, fmt.Errorf("%w for node %s: the suite's outside client is another node's host network, and the cluster has no node but %s the scenarios can use", kit.ErrNoOutsideClient, node, node)
}

// TerminatePods deletes the pods with their own grace period, then waits
// until each one's endpoints are terminating and serving in every
// EndpointSlice of the namespace, then until every node's proxy has
// synced.
func (w *workspace) TerminatePods(ctx context.Context, names ...string) error {
	for _, name := range names {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}}
		if err := w.res().Delete(ctx, pod); err != nil {
			return fmt.Errorf("deleting pod %s/%s: %w", w.ns, name, err)
		}
	}
	for _, name := range names {
		what := "pod " + w.ns + "/" + name + " terminating, its endpoints serving"
		if err := w.t.poll(ctx, what, func() (bool, error) { return w.terminatingAndServing(ctx, name) }); err != nil {
			return err
		}
	}
	return w.waitProxySync(ctx)
}

// terminatingAndServing says whether a pod is terminating and every
// endpoint of it in the namespace's EndpointSlices says terminating and
// serving (so not ready).
func (w *workspace) terminatingAndServing(ctx context.Context, name string) (bool, error) {
	var pod corev1.Pod
	err := w.res().Get(ctx, name, w.ns, &pod)
	if apierrors.IsNotFound(err) {
		return false, stopPolling(fmt.Errorf("pod %s is gone already: it stopped serving before its grace period ended", name))
	}
	if err != nil {
		return false, err
	}
	if pod.DeletionTimestamp == nil {
		return false, fmt.Errorf("pod %s has no deletionTimestamp yet", name)
	}
	var list discoveryv1.EndpointSliceList
	if err := w.res().List(ctx, &list); err != nil {
		return false, err
	}
	for _, sl := range list.Items {
		for _, e := range sl.Endpoints {
			if e.TargetRef == nil || e.TargetRef.Kind != "Pod" || e.TargetRef.Name != name {
				continue
			}
			c := e.Conditions
			if !isTrue(c.Terminating) || !isTrue(c.Serving) || isTrue(c.Ready) {
				return false, fmt.Errorf("EndpointSlice %s: endpoint of pod %s is ready=%v serving=%v terminating=%v", sl.Name, name, show(c.Ready), show(c.Serving), show(c.Terminating))
			}
		}
	}
	return true, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func show(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
}

// LoadBalancerAddress polls the Service until its status has an IP
// address or within has passed, then waits for the proxies.
func (w *workspace) LoadBalancerAddress(ctx context.Context, service string, within time.Duration) (netip.Addr, error) {
	deadline := time.Now().Add(within)
	for {
		svc, err := w.Service(ctx, service)
		if err != nil {
			return netip.Addr{}, err
		}
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if a, err := netip.ParseAddr(ing.IP); err == nil && a.Is4() {
				return a, w.waitProxySync(ctx)
			}
		}
		if time.Now().After(deadline) {
			return netip.Addr{}, fmt.Errorf("%w: Service %s/%s has no IPv4 address in status.loadBalancer.ingress after %s (%v): nothing on the cluster assigned one in that time",
				kit.ErrNoLoadBalancerAddress, w.ns, service, within, svc.Status.LoadBalancer.Ingress)
		}
		select {
		case <-ctx.Done():
			return netip.Addr{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Lookup runs `svclab lookup` in the pod, whose resolver is the kubelet's
// (dnsPolicy ClusterFirst: the cluster DNS, the namespace's search list).
func (w *workspace) Lookup(ctx context.Context, pod, name, qtype string) (dnslookup.Answer, error) {
	out, err := w.t.exec(ctx, w.ns, pod, "", selfexec.Argv("/svclab", &selfexec.Lookup{Name: name, Type: qtype})...)
	if err != nil {
		return dnslookup.Answer{}, err
	}
	var a dnslookup.Answer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		return dnslookup.Answer{}, fmt.Errorf("lookup %s in pod %s: reading its answer %q: %w", name, pod, out, err)
	}
	return a, nil
}
