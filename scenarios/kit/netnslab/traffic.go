package netnslab

import (
	"context"
	"net/netip"

	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/scenarios/kit"
)

// TrafficWith runs the traffic client with o from the pod's own namespace,
// or from the lab's client (outside the cluster, routed through the edge
// router to the node).
func (w *labWorkspace) TrafficWith(_ context.Context, from kit.Client, target netip.AddrPort, o kit.TrafficOptions) (*traffic.Result, error) {
	host := from.Pod
	if host == "" {
		host = "client"
	}
	return w.lab.Lab.Traffic(host, o.Options(target), Options(w.lab.Binary))
}

// DeletePods deletes the pods as `kubectl delete pod --grace-period=1`
// does; the lab returns once they are gone and its proxies have synced.
func (w *labWorkspace) DeletePods(ctx context.Context, names ...string) error {
	return w.lab.Lab.DeletePods(ctx, names, Options(w.lab.Binary), netns.DeleteOptions{GracePeriod: 1})
}
