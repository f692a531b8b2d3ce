package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/scenarios/kit"
)

// TrafficWith runs svclab's traffic client with o in the pod, or in the
// node agent (the node's host network: outside the pod network) of
// from.Node.
func (w *workspace) TrafficWith(ctx context.Context, from kit.Client, target netip.AddrPort, o kit.TrafficOptions) (*traffic.Result, error) {
	run := &selfexec.Traffic{Raw: true, Options: o.Options(target)}
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

// DeletePods deletes the pods with a grace period of one second, waits
// until the API server has none of them, then until every node's proxy
// has synced.
func (w *workspace) DeletePods(ctx context.Context, names ...string) error {
	for _, name := range names {
		var pod corev1.Pod
		err := w.res().Get(ctx, name, w.ns, &pod)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		// A pod terminating already (TerminatePods) is force-deleted, as
		// `kubectl delete --grace-period=0 --force` does: a kubelet keeps
		// the grace period its kill started with, so a second, shorter one
		// would still wait for the first.
		grace := time.Second
		if pod.DeletionTimestamp != nil {
			grace = 0
		}
		if err := w.res().Delete(ctx, &pod, resources.WithGracePeriod(grace)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting pod %s/%s: %w", w.ns, name, err)
		}
	}
	for _, name := range names {
		err := w.t.poll(ctx, "pod "+w.ns+"/"+name+" to be gone", func() (bool, error) {
			var pod corev1.Pod
			err := w.res().Get(ctx, name, w.ns, &pod)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			return false, fmt.Errorf("pod %s is %s", name, pod.Status.Phase)
		})
		if err != nil {
			return err
		}
	}
	return w.waitProxySync(ctx)
}
