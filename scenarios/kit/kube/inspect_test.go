package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/scenarios/kit"
)

// asMap is a typed object as the fake API stores it.
func asMap(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestInspect: on a cluster with kubeadm's kube-proxy, a tainted control
// plane and a LoadBalancer Service that has an address, the dry run's
// reads find the proxy and its configuration, which nodes the scenarios
// may use, and that addresses get assigned — and make no request but
// get and list.
func TestInspect(t *testing.T) {
	f, cfg := newFakeAPI(t, "control-plane", "worker1", "worker2")
	cp := f.get("nodes", "", "control-plane")
	cp["spec"] = map[string]any{"taints": []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}}}
	f.put("daemonsets", asMap(t, kubeadmKubeProxy()))
	f.put("configmaps", asMap(t, configMap("kube-system", "kube-proxy", map[string]string{
		"config.conf": kubeProxyConfHeader + "mode: nftables\nclusterCIDR: 10.244.0.0/16\n"})))
	lb := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "front"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}}}}
	f.put("services", asMap(t, lb))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := Inspect(ctx, cfg, Options{Source: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Proxy.Kind != kit.ProxyKubeProxy || in.Proxy.Mode != "nftables" || in.Proxy.ConfigMap != "kube-system/kube-proxy" {
		t.Errorf("proxy %+v, want kube-proxy in nftables mode from kube-system/kube-proxy", in.Proxy)
	}
	wantNodes := []InspectedNode{
		{Name: "control-plane", Unusable: "taint node-role.kubernetes.io/control-plane:NoSchedule (--tolerate-all)"},
		{Name: "worker1"}, {Name: "worker2"},
	}
	if !reflect.DeepEqual(in.Nodes, wantNodes) || in.Usable() != 2 {
		t.Errorf("nodes %+v (%d usable), want %+v", in.Nodes, in.Usable(), wantNodes)
	}
	if in.LoadBalancer != "yes: Service shop/front has the address 203.0.113.7" {
		t.Errorf("LoadBalancer %q", in.LoadBalancer)
	}
	for _, c := range f.recorded() {
		if c.Verb != "get" && c.Verb != "list" {
			t.Errorf("the dry run made a %s request: %s", c.Verb, c)
		}
	}

	// With --tolerate-all and a selector.
	in, err = Inspect(ctx, cfg, Options{Source: "fake", TolerateAll: true, NodeSelector: map[string]string{"kubernetes.io/hostname": "worker2"}})
	if err != nil {
		t.Fatal(err)
	}
	if in.Usable() != 1 || in.Nodes[2].Unusable != "" || !strings.HasPrefix(in.Nodes[0].Unusable, "not selected by --node-selector") {
		t.Errorf("--tolerate-all --node-selector kubernetes.io/hostname=worker2: nodes %+v", in.Nodes)
	}
}

func TestLoadBalancerSupport(t *testing.T) {
	f, cfg := newFakeAPI(t, "node1")
	ctx := context.Background()
	check := func(want string) {
		t.Helper()
		in, err := Inspect(ctx, cfg, Options{Source: "fake"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(in.LoadBalancer, want) {
			t.Errorf("LoadBalancer %q, want it to start %q", in.LoadBalancer, want)
		}
	}
	f.put("daemonsets", asMap(t, kubeadmKubeProxy()))
	f.put("configmaps", asMap(t, configMap("kube-system", "kube-proxy", map[string]string{"config.conf": kubeProxyConfHeader})))
	check("unknown until run")
	f.put("deployments", map[string]any{"metadata": map[string]any{"namespace": "metallb-system", "name": "controller"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "controller", "image": "quay.io/metallb/controller:v0.14.8"}}}}}})
	check("likely: MetalLB (Deployment metallb-system/controller, quay.io/metallb/controller:v0.14.8)")
}

// TestProxyAsksTheNodes: the target's Proxy takes the mode from a node's
// /proxyMode (over the config's) and sees the metrics, once per run.
func TestProxyAsksTheNodes(t *testing.T) {
	f, cfg := newFakeAPI(t, "node1", "node2")
	f.put("daemonsets", asMap(t, kubeadmKubeProxy()))
	f.put("configmaps", asMap(t, configMap("kube-system", "kube-proxy", map[string]string{"config.conf": kubeProxyConfHeader + "mode: iptables\n"})))
	asked := 0
	f.execOut = func(_ *fakeAPI, _, _ string, cmd []string) (string, error) {
		asked++
		switch strings.Join(cmd, " ") {
		case strings.Join(selfexec.Argv("/svclab", &selfexec.NodeGet{URL: proxyModeURL}), " "):
			return "nftables", nil
		case strings.Join(selfexec.Argv("/svclab", &selfexec.NodeGet{URL: proxyMetricURL}), " "):
			return metricLastSync + "{ip_family=\"IPv4\"} 2\n" + metricLastQueued + "{ip_family=\"IPv4\"} 1\n", nil
		}
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	target, err := New(ctx, cfg, Options{Source: "fake", Image: "reg/svclab@sha256:0", PullPolicy: "IfNotPresent", ReadyTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close(context.Background())
	p, err := target.Proxy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != "nftables" || !strings.HasPrefix(p.ModeFrom, "/proxyMode on node ") || !p.Metrics {
		t.Errorf("proxy %+v, want nftables from /proxyMode, with metrics", p)
	}
	before := asked
	if _, err := target.Proxy(ctx); err != nil || asked != before {
		t.Errorf("a second Proxy asked the nodes again (%d execs, then %d) or failed: %v", before, asked, err)
	}
}

// TestInspectConfigMapOutsideTheRBAC: a proxy whose --config is a
// ConfigMap the RBAC table does not grant (not --proxy-config's) is an
// error that says to name it with --proxy-config; named, it is read.
func TestInspectConfigMapOutsideTheRBAC(t *testing.T) {
	f, cfg := newFakeAPI(t, "node1")
	ds := kubeadmKubeProxy()
	ds.Spec.Template.Spec.Volumes[0] = configMapVolume("kube-proxy", "proxy-settings")
	f.put("daemonsets", asMap(t, ds))
	f.put("configmaps", asMap(t, configMap("kube-system", "proxy-settings", map[string]string{"config.conf": kubeProxyConfHeader + "mode: nftables\n"})))
	ctx := context.Background()
	_, err := Inspect(ctx, cfg, Options{Source: "fake"})
	if err == nil || !strings.Contains(err.Error(), "name it with --proxy-config kube-system/proxy-settings") {
		t.Errorf("a ConfigMap the RBAC does not grant: error %v, want it to say to name it with --proxy-config", err)
	}
	in, err := Inspect(ctx, cfg, Options{Source: "fake", ProxyConfig: "kube-system/proxy-settings"})
	if err != nil || in.Proxy.Mode != "nftables" || in.Proxy.ConfigMap != "kube-system/proxy-settings" {
		t.Errorf("named with --proxy-config: %+v, %v", in, err)
	}
}

// TestModeFromTables: when /proxyMode does not answer, the mode is read
// off the node's tables — nftables' table, the ipvs ipset match with
// virtual servers, KUBE-SERVICES — over the configuration's.
func TestModeFromTables(t *testing.T) {
	const ipvsNAT = "*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ\nCOMMIT\n"
	const iptablesNAT = "*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -j KUBE-SVC-X\nCOMMIT\n"
	const virtualServers = "IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\nTCP  0A600001:01BB rr\n"
	tests := []struct {
		name                string
		nft                 bool
		nat, ipvs, wantMode string
	}{
		{"nftables", true, "", "", "nftables"},
		{"ipvs", false, ipvsNAT, virtualServers, "ipvs"},
		{"iptables with an earlier ipvs mode's virtual servers", false, iptablesNAT, virtualServers, "iptables"},
		{"no tables: the configuration's", false, "", "", "iptables"},
	}
	for _, tt := range tests {
		f, cfg := newFakeAPI(t, "node1")
		f.put("daemonsets", asMap(t, kubeadmKubeProxy()))
		f.put("configmaps", asMap(t, configMap("kube-system", "kube-proxy", map[string]string{"config.conf": kubeProxyConfHeader})))
		f.execOut = func(_ *fakeAPI, _, _ string, cmd []string) (string, error) {
			run := strings.Join(cmd, " ")
			switch {
			case strings.Contains(run, "nft list table ip kube-proxy") && tt.nft:
				return "table ip kube-proxy {\n}\n", nil
			case strings.Contains(run, "iptables-save") && strings.Contains(run, "-t nat") && tt.nat != "":
				return tt.nat, nil
			case strings.Contains(run, "cat /proc/net/ip_vs") && tt.ipvs != "":
				return tt.ipvs, nil
			}
			return "", fmt.Errorf("exit status 1")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		target, err := New(ctx, cfg, Options{Source: "fake", Image: "reg/svclab@sha256:0", PullPolicy: "IfNotPresent", ReadyTimeout: 10 * time.Second})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		p, err := target.Proxy(ctx)
		target.Close(context.Background())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if p.Mode != tt.wantMode || p.Metrics {
			t.Errorf("%s: mode %q from %q, metrics %t; want %q, no metrics", tt.name, p.Mode, p.ModeFrom, p.Metrics, tt.wantMode)
		}
	}
}
