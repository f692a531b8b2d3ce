package netnslab

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"time"

	"github.com/svclab/svclab/labs/agents/dnslookup"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/workload"
	"github.com/svclab/svclab/scenarios/kit"
)

// TrafficFromNode runs the traffic client in the node's own namespace.
func (w *labWorkspace) TrafficFromNode(_ context.Context, node string, target netip.AddrPort, o kit.TrafficOptions) (*traffic.Result, error) {
	return w.lab.Lab.Traffic(node, o.Options(target), Options(w.lab.Binary))
}

// Outside is the lab's client, behind the edge router, which reaches
// every node's address (TrafficWith sends a Client without a pod from it).
func (w *labWorkspace) Outside(_ context.Context, node string) (kit.Client, error) {
	return kit.Client{Node: node}, nil
}

// TerminatePods deletes the pods as `kubectl delete pod --wait=false`
// does, each with its own grace period: the lab returns once they are
// terminating (endpoints serving, not ready), its proxies have
// programmed that, and the pods' servers have had SIGTERM.
func (w *labWorkspace) TerminatePods(ctx context.Context, names ...string) error {
	return w.lab.Lab.DeletePods(ctx, names, Options(w.lab.Binary), netns.DeleteOptions{GracePeriod: -1, NoWait: true})
}

// LoadBalancerAddress reads the Service once: the lab's load balancer
// assigns addresses in the same change that applies the Service, before
// its proxies program it, so there is nothing to wait for.
func (w *labWorkspace) LoadBalancerAddress(ctx context.Context, service string, _ time.Duration) (netip.Addr, error) {
	svc, err := w.Service(ctx, service)
	if err != nil {
		return netip.Addr{}, err
	}
	if a := workload.LoadBalancerIngress(svc); a.IsValid() {
		return a, nil
	}
	why := "the lab file has no spec.loadBalancer.pool"
	if pool := w.lab.Topology.Spec.LoadBalancer.Pool; pool.IsValid() {
		why = fmt.Sprintf("the Service names another load balancer, or the pool %s is exhausted", pool)
	}
	return netip.Addr{}, fmt.Errorf("%w: lab %s gave Service %s none when it was applied: %s", kit.ErrNoLoadBalancerAddress, w.lab.Name(), service, why)
}

// Lookup runs `svclab lookup` in the pod's namespace, whose resolv.conf
// is the one the lab writes for it (cluster DNS, the namespace's search
// list).
func (w *labWorkspace) Lookup(_ context.Context, pod, name, qtype string) (dnslookup.Answer, error) {
	out, err := w.lab.Run(pod, selfexec.Argv(w.lab.Binary, &selfexec.Lookup{Name: name, Type: qtype})...)
	if err != nil {
		return dnslookup.Answer{}, err
	}
	var a dnslookup.Answer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		return dnslookup.Answer{}, fmt.Errorf("lookup %s in pod %s: reading its answer %q: %w", name, pod, out, err)
	}
	return a, nil
}
