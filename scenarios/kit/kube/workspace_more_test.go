package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/scenarios/kit"
)

// moreTarget is a target with its node agent on the fake API server's
// nodes, and a workspace on it.
func moreTarget(t *testing.T, nodes ...string) (*fakeAPI, *workspace) {
	t.Helper()
	f, cfg := newFakeAPI(t, nodes...)
	target, err := New(context.Background(), cfg, Options{Source: "fake", Image: "i", ReadyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close(context.Background()) })
	ws, err := target.Workspace(context.Background(), "more", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	return f, ws.(*workspace)
}

// The outside client of a node is another node's agent; a one-node
// cluster has none, and says why.
func TestOutsideIsAnotherNodesHostNetwork(t *testing.T) {
	_, ws := moreTarget(t, "n1", "n2")
	for node, want := range map[string]string{"n1": "n2", "n2": "n1"} {
		c, err := ws.Outside(context.Background(), node)
		if err != nil || c != (kit.Client{Node: want}) {
			t.Errorf("Outside(%s) = %+v, %v; want the agent of %s", node, c, err, want)
		}
	}
	_, one := moreTarget(t, "n1")
	_, err := one.Outside(context.Background(), "n1")
	if !errors.Is(err, kit.ErrNoOutsideClient) || !strings.Contains(err.Error(), "no node but n1") {
		t.Errorf("Outside on one node: %v, want ErrNoOutsideClient saying there is no other node", err)
	}
}

// A pod counts as terminating once it has a deletionTimestamp and each of
// its endpoints says terminating and serving, not ready; a pod already
// gone ends the wait at once.
func TestTerminatingAndServing(t *testing.T) {
	f, ws := moreTarget(t, "n1")
	ctx := context.Background()
	pod := func(deleting bool) {
		m := map[string]any{"name": "web-0", "namespace": ws.ns}
		if deleting {
			m["deletionTimestamp"] = time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
		}
		f.put("pods", map[string]any{"metadata": m, "spec": map[string]any{"nodeName": "n1"}})
	}
	slice := func(ready, serving, terminating bool) {
		f.put("endpointslices", map[string]any{"metadata": map[string]any{"name": "web-abcde", "namespace": ws.ns,
			"labels": map[string]any{"kubernetes.io/service-name": "web"}}, "addressType": "IPv4",
			"endpoints": []any{map[string]any{"addresses": []any{"10.244.1.2"},
				"conditions": map[string]any{"ready": ready, "serving": serving, "terminating": terminating},
				"targetRef":  map[string]any{"kind": "Pod", "name": "web-0", "namespace": ws.ns}}}})
	}
	for _, tt := range []struct {
		deleting, ready, serving, terminating, want bool
	}{
		{deleting: false, ready: true, serving: true, want: false},                     // not deleted yet
		{deleting: true, ready: true, serving: true, want: false},                      // the EndpointSlice lags
		{deleting: true, ready: false, serving: false, terminating: true, want: false}, // terminating, not serving
		{deleting: true, ready: false, serving: true, terminating: true, want: true},
	} {
		pod(tt.deleting)
		slice(tt.ready, tt.serving, tt.terminating)
		got, err := ws.terminatingAndServing(ctx, "web-0")
		if got != tt.want || (got && err != nil) {
			t.Errorf("%+v: %v, %v", tt, got, err)
		}
	}
	_, err := ws.terminatingAndServing(ctx, "gone-0")
	var stop stoppedPoll
	if !errors.As(err, &stop) {
		t.Errorf("a pod that is gone: %v, want an error that ends the wait", err)
	}
}

// A Service the cluster gives no address is ErrNoLoadBalancerAddress once
// the wait is over, naming the Service and the wait.
func TestLoadBalancerAddressSaysWhenNoneCame(t *testing.T) {
	f, ws := moreTarget(t, "n1")
	f.put("services", map[string]any{"metadata": map[string]any{"name": "lb", "namespace": ws.ns},
		"spec": map[string]any{"type": "LoadBalancer", "ports": []any{map[string]any{"port": 80}}}})
	start := time.Now()
	_, err := ws.LoadBalancerAddress(context.Background(), "lb", time.Second)
	if !errors.Is(err, kit.ErrNoLoadBalancerAddress) || !strings.Contains(err.Error(), ws.ns+"/lb") || !strings.Contains(err.Error(), "after 1s") {
		t.Errorf("LoadBalancerAddress: %v, want ErrNoLoadBalancerAddress naming %s/lb and the wait", err, ws.ns)
	}
	if took := time.Since(start); took < time.Second || took > 10*time.Second {
		t.Errorf("LoadBalancerAddress took %s: want the wait (1s) and not much more", took)
	}
}
