package kube

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/svclab/svclab/scenarios/kit"
)

// TestEveryCallIsInTheTableAndEveryRuleIsUsed proves the RBAC table
// (Permissions) against what the code does, on the fake API server that
// records every request as the authorizer sees it: the whole life of a
// run — set-up, a scenario's workspace and every read of the nodes, the
// --disruptive mode switch and back, the end —, an image that does not
// pull, a cluster whose proxy is Cilium's, and the sweep of a killed
// --disruptive run. Every request must be granted by a rule, and every
// rule (each verb, each name) must be used by one: the table is exactly
// what the suite needs. (The guard refuses a request outside the table
// in each flow too, so a flow that needs more fails with its request.)
func TestEveryCallIsInTheTableAndEveryRuleIsUsed(t *testing.T) {
	var calls []apiCall
	for _, flow := range []struct {
		name string
		run  func(t *testing.T, f *fakeAPI, cfg *rest.Config, opts Options) error
	}{
		{"a whole run", wholeRun},
		{"an image that does not pull", imageThatDoesNotPull},
		{"a cluster whose proxy is Cilium's", ciliumCluster},
		{"the sweep of a killed --disruptive run", sweepOfAKilledRun},
	} {
		t.Run(flow.name, func(t *testing.T) {
			f, cfg := newFakeAPI(t, "n1", "n2")
			withKubeProxy(f)
			f.execOut = nodeAndPodAnswers
			if err := flow.run(t, f, cfg, Options{Source: "fake", Image: "i", ProxyConfig: DefaultProxyConfig, Out: testWriter{t}}); err != nil {
				t.Fatal(err)
			}
			calls = append(calls, f.recorded()...)
		})
	}
	if t.Failed() {
		return
	}
	roles, _ := Permissions(DefaultProxyConfig)
	used := map[string]bool{}
	for _, c := range calls {
		req := apiRequest{Verb: c.Verb, Group: c.Group, Resource: c.Resource, Subresource: c.Subresource, Namespace: c.Namespace, Name: c.Name}
		g, ok := grants(roles, req)
		if !ok {
			t.Errorf("%s: no rule of the table grants it", req)
			continue
		}
		used[usageKey(g.Role, g.Rule, req.Verb, req.Name)] = true
	}
	for _, role := range roles {
		for _, rule := range role.Rules {
			for _, verb := range rule.Verbs {
				names := rule.Names
				if len(names) == 0 {
					names = []string{""}
				}
				for _, name := range names {
					if !used[usageKey(role, rule, verb, name)] {
						t.Errorf("%s %s, rule %q: %s%s is never used: remove it, or drive the code that needs it here", role.Kind(), role.Name, rule.Summary(), verb, nameSuffix(name))
					}
				}
			}
		}
	}
}

func usageKey(role Role, rule Rule, verb, name string) string {
	if len(rule.Names) == 0 {
		name = ""
	}
	return fmt.Sprintf("%s|%s|%s|%s", role.Name, rule.Summary(), verb, name)
}

func nameSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " on " + name
}

// testWriter is a test's log as an io.Writer (the target's progress).
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// nodeAndPodAnswers answers the commands the suite execs, as the node
// agent and the scenario pods would.
func nodeAndPodAnswers(f *fakeAPI, ns, pod string, cmd []string) (string, error) {
	joined := strings.Join(cmd, " ")
	switch {
	case strings.Contains(joined, "/proxyMode"):
		return effectiveMode(str(proxyConfigData(f)["config.conf"])), nil
	case strings.Contains(joined, "/metrics"):
		return "kubeproxy_sync_proxy_rules_last_timestamp_seconds 2\nkubeproxy_sync_proxy_rules_last_queued_timestamp_seconds 1\n", nil
	case strings.Contains(joined, "node conntrack"):
		return "[]", nil
	case strings.Contains(joined, "node route-source"):
		return "172.18.0.2\n", nil
	case strings.Contains(joined, "iptables-save"):
		return "*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n", nil
	case strings.Contains(joined, " nft "):
		return `{"nftables": []}`, nil
	case strings.Contains(joined, "ip_vs"):
		return "", errors.New("no /proc/net/ip_vs: no IPVS on this node")
	case slices.Contains(cmd, "traffic"), slices.Contains(cmd, "lookup"):
		return "{}", nil
	}
	return "", fmt.Errorf("the fake node agent does not know %q", joined)
}

// scenarioManifests are what a scenario applies: a Deployment, a Service
// over it, a client Pod (not netexec: the proxy-sync wait checks them by
// metrics only).
const scenarioManifests = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: i, args: [serve]}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: probe, labels: {app: probe}}
spec:
  containers: [{name: probe, image: i, args: [serve]}]
`

// wholeRun is a --disruptive run with one scenario, each of the
// workspace's reads and writes once.
func wholeRun(t *testing.T, f *fakeAPI, cfg *rest.Config, opts Options) error {
	ctx := context.Background()
	target, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	if _, err := target.Proxy(ctx); err != nil {
		return err
	}
	if err := target.lease.renew(ctx); err != nil {
		return err
	}
	ws, err := target.Workspace(ctx, "flow", 2, "")
	if err != nil {
		return err
	}
	if err := ws.Apply(ctx, scenarioManifests); err != nil {
		return err
	}
	svc, err := ws.Service(ctx, "web")
	if err != nil {
		return err
	}
	vip := netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), 80)
	pods, err := ws.Pods(ctx, "web")
	if err != nil || len(pods) != 2 {
		return fmt.Errorf("pods %v: %v", pods, err)
	}
	nodes, err := ws.Nodes(ctx)
	if err != nil || len(nodes) != 2 {
		return fmt.Errorf("nodes %v: %v", nodes, err)
	}
	node := nodes[0].Name
	steps := []func() error{
		func() error { _, err := ws.Traffic(ctx, kit.Client{Pod: "probe", Node: node}, vip, 1); return err },
		func() error {
			_, err := ws.TrafficWith(ctx, kit.Client{Node: node}, vip, kit.TrafficOptions{Connections: 1})
			return err
		},
		func() error { _, err := ws.IPTablesSave(ctx, node, "nat", true); return err },
		func() error { _, err := ws.NFTables(ctx, node); return err },
		func() error { _, err := ws.Conntrack(ctx, node); return err },
		func() error { _, err := ws.RouteSource(ctx, node, nodes[1].IP); return err },
		func() error { _, err := ws.ProxyMode(ctx, node); return err },
		func() error { _, err := ws.ProxyModes(ctx); return err },
		func() error { _, err := ws.Lookup(ctx, "probe", "web", "A"); return err },
		func() error { return ws.SwitchProxyMode(ctx, "nftables") },
		func() error { return ws.SwitchProxyMode(ctx, "iptables") },
		func() error { return ws.DeletePods(ctx, "probe") },
		func() error { return ws.Delete(ctx) },
		func() error { return target.Close(ctx) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

// imageThatDoesNotPull: a scenario pod whose image does not pull, the
// kubelet's message only in an event.
func imageThatDoesNotPull(t *testing.T, f *fakeAPI, cfg *rest.Config, opts Options) error {
	ctx := context.Background()
	target, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer target.Close(ctx)
	ws, err := target.Workspace(ctx, "pull", 1, "")
	if err != nil {
		return err
	}
	fail := failingPods("web", "ErrImagePull", "")
	f.podStatus = func(f *fakeAPI, pod map[string]any) {
		fail(f, pod)
		if strings.HasPrefix(str(meta(pod)["name"]), "web") {
			f.putLocked("events", map[string]any{"metadata": map[string]any{"name": str(meta(pod)["name"]) + ".failed", "namespace": meta(pod)["namespace"]},
				"involvedObject": map[string]any{"kind": "Pod", "name": meta(pod)["name"]}, "reason": "Failed", "message": "Failed to pull image \"i\": denied"})
		}
	}
	err = ws.Apply(ctx, scenarioManifests)
	if err == nil || !strings.Contains(err.Error(), `ErrImagePull: Failed to pull image "i": denied`) {
		return fmt.Errorf("Apply: %v, want the pull failure", err)
	}
	return ws.Delete(ctx)
}

// ciliumCluster: no kube-proxy, Cilium's kube-proxy replacement.
func ciliumCluster(t *testing.T, f *fakeAPI, cfg *rest.Config, opts Options) error {
	f.mu.Lock()
	for _, resource := range []string{"pods", "daemonsets", "configmaps"} {
		for key := range f.objs[resource] {
			if strings.HasPrefix(key, "kube-system/") {
				delete(f.objs[resource], key)
			}
		}
	}
	f.mu.Unlock()
	f.put("daemonsets", map[string]any{"metadata": map[string]any{"name": "cilium", "namespace": "kube-system"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "cilium-agent", "image": "quay.io/cilium/cilium:v1.16.5"}}}}}})
	f.put("configmaps", map[string]any{"metadata": map[string]any{"name": "cilium-config", "namespace": "kube-system"}, "data": map[string]any{"kube-proxy-replacement": "true"}})
	ctx := context.Background()
	opts.ProxyConfig = ""
	target, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer target.Close(ctx)
	p, err := target.Proxy(ctx)
	if err != nil {
		return err
	}
	if !strings.Contains(p.Where, "Cilium's kube-proxy replacement") {
		return fmt.Errorf("proxy %+v: Cilium's ConfigMap not read", p)
	}
	return nil
}

// sweepOfAKilledRun: a run killed during the mode switch, an hour ago;
// the next run puts the ConfigMap back and deletes its namespaces.
func sweepOfAKilledRun(t *testing.T, f *fakeAPI, cfg *rest.Config, opts Options) error {
	killed := stoppedRun(t, cfg, "killed")
	setLeaseRenewed(f, killed.agentNS, time.Now().Add(-time.Hour))
	return Cleanup(context.Background(), cfg, opts)
}
