package labs

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/svclab/svclab/internal/hostprog"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/workload"
)

// Apply applies a manifest file to the lab, like `kubectl apply -f`: it
// creates or replaces the objects, brings up new pods (their namespace,
// their link to the node, their server on every containerPort), removes
// pods that are gone, and waits until every node's proxy has the result in
// its rules. A manifest that does not validate changes nothing.
func (l *Lab) Apply(ctx context.Context, manifestFile string, opts Options) error {
	data, err := workload.ReadFile(manifestFile)
	if err != nil {
		return err
	}
	m, err := workload.Decode(data, manifestFile)
	if err != nil {
		return err
	}
	if err := hostprog.Ensure(ctx, opts.Out, hostprog.Needs(hostprog.Lab)...); err != nil {
		return err
	}
	return l.update(ctx, opts, func(cur *labstore.State) (*labstore.State, error) {
		return l.Cluster().Apply(cur, m, manifestFile)
	})
}

// DeletePods deletes pods by name; a Deployment's pods come back with new
// names and IPs, as the ReplicaSet controller would make them.
func (l *Lab) DeletePods(ctx context.Context, names []string, opts Options) error {
	return l.update(ctx, opts, func(cur *labstore.State) (*labstore.State, error) {
		return l.Cluster().DeletePods(cur, names)
	})
}

// update runs one change of the lab's objects under the lab's lock and makes
// the kernel follow it.
func (l *Lab) update(ctx context.Context, opts Options, change func(*labstore.State) (*labstore.State, error)) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	unlock, err := l.Store.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	cur, _, err := l.Store.ReadObjects()
	if err != nil {
		return err
	}
	next, err := change(cur)
	if err != nil {
		return err
	}
	// New pods first, so that a Service's new endpoints answer before the
	// proxies send traffic to them; a pod that fails to start undoes the
	// ones started before it, and nothing of the change is stored.
	var started []string
	for _, pod := range next.Pods {
		if cur.Pod(pod.Name) != nil {
			continue // pods keep their name, node and IP for life
		}
		if err := l.startPod(ctx, pod, opts); err != nil {
			for _, name := range append(started, pod.Name) {
				l.stopPod(name) //nolint:errcheck // best effort: the error that matters is err
			}
			return err
		}
		started = append(started, pod.Name)
		fmt.Fprintf(opts.Out, "pod/%s created on %s with IP %s\n", pod.Name, pod.Spec.NodeName, pod.Status.PodIP)
	}
	gen, err := l.Store.WriteObjects(next)
	if err != nil {
		return err
	}
	for _, svc := range next.Services {
		if old := cur.Service(svc.Namespace, svc.Name); old == nil {
			fmt.Fprintf(opts.Out, "service/%s created: cluster IP %s%s\n", svc.Name, svc.Spec.ClusterIP, nodePorts(svc.Spec.Ports))
		}
	}
	syncErr := l.waitForProxies(ctx, gen, opts, true)
	// Gone pods last: the proxies have stopped sending them new traffic.
	for _, old := range cur.Pods {
		if next.Pod(old.Name) == nil {
			if err := l.stopPod(old.Name); err != nil {
				return err
			}
			fmt.Fprintf(opts.Out, "pod/%s deleted\n", old.Name)
		}
	}
	return syncErr
}

func mustAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}
