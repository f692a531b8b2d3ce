package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
)

// syncCluster is a fake cluster for waitProxySync: kubeadm's kube-proxy,
// two nodes, and in a workspace's namespace a Service "web"
// (10.96.0.50:80) over netexec pods web-a (node1) and web-b (node2),
// ready endpoints of its EndpointSlice; its node agent answers /proxyMode,
// /metrics (settled unless metrics says otherwise) and traffic (answered
// by answer, which sees the target and the node's agent pod).
type syncCluster struct {
	f       *fakeAPI
	target  *Target
	ws      *workspace
	mu      sync.Mutex
	metrics string
	answer  func(target, agentPod string) []string
	rounds  map[string]int // traffic runs by target and agent pod
}

func newSyncCluster(t *testing.T, internalTrafficPolicy string) *syncCluster {
	t.Helper()
	c := &syncCluster{rounds: map[string]int{},
		metrics: metricLastSync + " 2\n" + metricLastQueued + " 1\n" + metricEndpointsPending + " 0\n"}
	f, cfg := newFakeAPI(t, "node1", "node2")
	c.f = f
	f.put("daemonsets", asMap(t, kubeadmKubeProxy()))
	f.put("configmaps", asMap(t, configMap("kube-system", "kube-proxy", map[string]string{"config.conf": kubeProxyConfHeader})))
	f.execOut = c.exec
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	target, err := New(ctx, cfg, Options{Source: "fake", Image: "reg/svclab@sha256:0", PullPolicy: "IfNotPresent", ReadyTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close(context.Background()) })
	c.target = target
	ws, err := target.Workspace(ctx, "sync", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	c.ws = ws.(*workspace)
	ns := c.ws.ns
	spec := map[string]any{"clusterIP": "10.96.0.50", "selector": map[string]any{"app": "web"}, "ports": []any{map[string]any{"port": 80, "protocol": "TCP"}}}
	if internalTrafficPolicy != "" {
		spec["internalTrafficPolicy"] = internalTrafficPolicy
	}
	f.put("services", map[string]any{"metadata": map[string]any{"namespace": ns, "name": "web"}, "spec": spec})
	var endpoints []any
	for _, p := range []struct{ name, node, ip string }{{"web-a", "node1", "10.244.1.5"}, {"web-b", "node2", "10.244.2.6"}} {
		f.put("pods", map[string]any{"metadata": map[string]any{"namespace": ns, "name": p.name, "labels": map[string]any{"app": "web"}},
			"spec": map[string]any{"nodeName": p.node, "containers": []any{map[string]any{"name": "netexec", "image": "x", "args": []any{"netexec", "--http-port=8080"}}}}})
		endpoints = append(endpoints, map[string]any{"addresses": []any{p.ip}, "conditions": map[string]any{"ready": true},
			"nodeName": p.node, "targetRef": map[string]any{"kind": "Pod", "name": p.name, "namespace": ns}})
	}
	f.put("endpointslices", map[string]any{"metadata": map[string]any{"namespace": ns, "name": "web-abcde",
		"labels": map[string]any{"kubernetes.io/service-name": "web"}}, "addressType": "IPv4", "endpoints": endpoints,
		"ports": []any{map[string]any{"name": "", "port": 8080}}})
	return c
}

// exec answers the node agent's commands.
func (c *syncCluster) exec(_ *fakeAPI, _, pod string, cmd []string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	joined := strings.Join(cmd, " ")
	switch {
	case joined == strings.Join(selfexec.Argv("/svclab", &selfexec.NodeGet{URL: proxyModeURL}), " "):
		return "iptables", nil
	case joined == strings.Join(selfexec.Argv("/svclab", &selfexec.NodeGet{URL: proxyMetricURL}), " "):
		return c.metrics, nil
	case len(cmd) > 1 && cmd[1] == "traffic":
		var to string
		for _, a := range cmd {
			if v, ok := strings.CutPrefix(a, "--to="); ok {
				to = v
			}
		}
		c.rounds[to+" "+pod]++
		backends := c.answer(to, pod)
		res := traffic.Result{Target: to, Backends: map[string]int{}}
		for _, n := range flagInt(cmd, "--count=") {
			for i := range n {
				b := backends[i%len(backends)]
				res.Backends[b]++
				res.Attempted++
				res.Succeeded++
			}
		}
		out, err := json.Marshal(res)
		return string(out), err
	}
	return "", fmt.Errorf("no answer to %q", joined)
}

// flagInt is the value of the flag with prefix in cmd, as a one-element
// slice (none when missing).
func flagInt(cmd []string, prefix string) []int {
	for _, a := range cmd {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			var n int
			fmt.Sscan(v, &n)
			return []int{n}
		}
	}
	return nil
}

// TestWaitProxySyncWaitsForEveryEndpoint: the wait goes on until the
// Service answers from both its ready endpoints from every node — the
// first rounds, answered by one pod only (the proxy has not programmed
// the other yet), are retried, not taken.
func TestWaitProxySyncWaitsForEveryEndpoint(t *testing.T) {
	c := newSyncCluster(t, "")
	calls := 0
	c.answer = func(string, string) []string {
		calls++
		if calls <= 2 {
			return []string{"web-a"}
		}
		return []string{"web-a", "web-b"}
	}
	if err := c.ws.waitProxySync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls != 4 {
		t.Errorf("%d traffic runs, want 4: two that miss web-b, then one per node", calls)
	}
	if len(c.rounds) != 2 {
		t.Errorf("traffic from %v, want from each node's agent", c.rounds)
	}
}

// TestWaitProxySyncInternalTrafficPolicyLocal: with
// internalTrafficPolicy Local each node reaches only its own endpoint,
// and the wait expects exactly that.
func TestWaitProxySyncInternalTrafficPolicyLocal(t *testing.T) {
	c := newSyncCluster(t, "Local")
	agents, err := c.target.agentPods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.answer = func(_, pod string) []string {
		if pod == agents["node1"] {
			return []string{"web-a"}
		}
		return []string{"web-b"}
	}
	if err := c.ws.waitProxySync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestWaitProxySyncWaitsForTheMetrics: with the endpoints answering, the
// wait still waits while the proxy's metrics say a change is pending, and
// its error says which.
func TestWaitProxySyncWaitsForTheMetrics(t *testing.T) {
	c := newSyncCluster(t, "")
	c.answer = func(string, string) []string { return []string{"web-a", "web-b"} }
	c.metrics = metricLastSync + " 2\n" + metricLastQueued + " 1\n" + metricEndpointsPending + " 1\n"
	c.target.opts.ReadyTimeout = 2 * time.Second
	err := c.ws.waitProxySync(context.Background())
	if err == nil || !strings.Contains(err.Error(), metricEndpointsPending+" is 1") {
		t.Fatalf("pending endpoint changes: error %v, want it to say %s is 1", err, metricEndpointsPending)
	}
	c.metrics = metricLastSync + " 1\n" + metricLastQueued + " 2\n"
	err = c.ws.waitProxySync(context.Background())
	if err == nil || !strings.Contains(err.Error(), "last sync 1.000 before the last queued change 2.000") {
		t.Fatalf("a sync older than the last change: error %v", err)
	}
}
