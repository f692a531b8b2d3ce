package kube

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
)

// originalProxyConfig is kube-system/kube-proxy as kubeadm writes it
// (shortened), byte for byte what a restore must put back.
var originalProxyConfig = map[string]any{
	"config.conf":     "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\nmode: iptables\n# a comment kubeadm did not write\n",
	"kubeconfig.conf": "apiVersion: v1\nkind: Config\n",
}

// withKubeProxy gives the fake cluster kubeadm's kube-proxy: its
// ConfigMap, one pod per node labelled k8s-app=kube-proxy, and the
// DaemonSet controller's part (a deleted pod is replaced by a new one),
// and answers /proxyMode on each node with the ConfigMap's mode and
// /metrics with a synced proxy. It returns how many proxy pods were
// deleted so far.
func withKubeProxy(f *fakeAPI) (deleted func() int) {
	f.put("configmaps", map[string]any{"metadata": map[string]any{"name": "kube-proxy", "namespace": "kube-system"}, "data": maps.Clone(originalProxyConfig)})
	f.put("daemonsets", map[string]any{
		"metadata": map[string]any{"name": "kube-proxy", "namespace": "kube-system", "labels": map[string]any{"k8s-app": "kube-proxy"}},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"k8s-app": "kube-proxy"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"k8s-app": "kube-proxy"}},
				"spec": map[string]any{
					"containers": []any{map[string]any{"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:v1.37.0",
						"command":      []any{"/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"},
						"volumeMounts": []any{map[string]any{"name": "kube-proxy", "mountPath": "/var/lib/kube-proxy"}}}},
					"volumes": []any{map[string]any{"name": "kube-proxy", "configMap": map[string]any{"name": "kube-proxy"}}},
				},
			},
		},
		"status": map[string]any{"desiredNumberScheduled": len(f.list("nodes", "")), "numberReady": len(f.list("nodes", ""))},
	})
	count := 0
	for i, n := range f.list("nodes", "") {
		f.putProxyPod(fmt.Sprintf("kube-proxy-%d", i), str(meta(n)["name"]))
	}
	f.afterDelete = func(f *fakeAPI, c apiCall, obj map[string]any) {
		if c.Resource == "pods" && c.Namespace == "kube-system" {
			f.mu.Lock()
			count++
			n := count
			f.mu.Unlock()
			f.putProxyPod(fmt.Sprintf("kube-proxy-new%d", n), str(field(obj, "spec.nodeName")))
		}
	}
	f.execOut = func(f *fakeAPI, ns, pod string, cmd []string) (string, error) {
		switch last := cmd[len(cmd)-1]; {
		case strings.HasSuffix(last, "/proxyMode"):
			return effectiveMode(str(proxyConfigData(f)["config.conf"])), nil
		case strings.HasSuffix(last, "/metrics"):
			return "kubeproxy_sync_proxy_rules_last_timestamp_seconds 2\nkubeproxy_sync_proxy_rules_last_queued_timestamp_seconds 1\n", nil
		}
		return "", nil
	}
	return func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return count
	}
}

func (f *fakeAPI) putProxyPod(name, node string) {
	pod := f.put("pods", map[string]any{"metadata": map[string]any{"name": name, "namespace": "kube-system", "labels": map[string]any{"k8s-app": "kube-proxy"}},
		"spec": map[string]any{"nodeName": node, "containers": []any{map[string]any{"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:v1.37.0"}}}})
	f.startPod(pod)
}

// proxyConfigData is the fake's kube-system/kube-proxy data now.
func proxyConfigData(f *fakeAPI) map[string]any {
	return maps.Clone(f.get("configmaps", "kube-system", "kube-proxy")["data"].(map[string]any))
}

// TestSwitchProxyModeSavesFirstAndCloseRestores: the first switch saves
// the ConfigMap in the cluster before changing it; Close puts it back
// byte for byte, restarts the proxy's pods, and deletes the saved copy.
func TestSwitchProxyModeSavesFirstAndCloseRestores(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1", "n2")
	deleted := withKubeProxy(f)
	ctx := context.Background()
	target, err := New(ctx, cfg, Options{Source: "fake", Image: "i", RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := target.switchProxyMode(ctx, "nftables"); err != nil {
		t.Fatalf("switch: %v", err)
	}
	saved := f.get("configmaps", "kube-system", SavedProxyConfigName)
	if saved == nil {
		t.Fatal("no saved copy after the first change")
	}
	if l := meta(saved)["labels"].(map[string]any); l[ManagedByLabel] != ManagedBy || l[RunLabel] != "run-1" {
		t.Errorf("saved copy labels %v", l)
	}
	if got := effectiveMode(proxyConfigData(f)["config.conf"].(string)); got != "nftables" {
		t.Errorf("mode after the switch: %s", got)
	}
	if deleted() != 2 {
		t.Errorf("%d proxy pods restarted, want 2", deleted())
	}
	if err := target.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := proxyConfigData(f); !maps.Equal(got, originalProxyConfig) {
		t.Errorf("after Close the ConfigMap is\n%v\nwant it as it was\n%v", got, originalProxyConfig)
	}
	if deleted() != 4 {
		t.Errorf("%d proxy pods restarted in all, want 4 (switch, restore)", deleted())
	}
	if f.get("configmaps", "kube-system", SavedProxyConfigName) != nil {
		t.Error("the saved copy is still there after the restore")
	}
}

// TestSwitchingBackWritesTheSavedData: switching back to the saved mode
// puts the saved data back exactly, so Close has nothing to restart.
func TestSwitchingBackWritesTheSavedData(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	deleted := withKubeProxy(f)
	ctx := context.Background()
	target, err := New(ctx, cfg, Options{Source: "fake", Image: "i"})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"nftables", "iptables"} {
		if err := target.switchProxyMode(ctx, mode); err != nil {
			t.Fatalf("switch to %s: %v", mode, err)
		}
	}
	if got := proxyConfigData(f); !maps.Equal(got, originalProxyConfig) {
		t.Errorf("after switching back the ConfigMap is\n%v\nwant\n%v", got, originalProxyConfig)
	}
	if err := target.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if deleted() != 2 {
		t.Errorf("%d proxy pods restarted, want 2 (the two switches; nothing to restore)", deleted())
	}
	if f.get("configmaps", "kube-system", SavedProxyConfigName) != nil {
		t.Error("the saved copy is still there")
	}
}

// TestSwitchRefusesWhileAnotherRunsCopyIsThere: a copy another run saved
// and did not put back stops the switch before any change.
func TestSwitchRefusesWhileAnotherRunsCopyIsThere(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	withKubeProxy(f)
	ctx := context.Background()
	target, err := New(ctx, cfg, Options{Source: "fake", Image: "i"})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close(ctx)
	f.put("configmaps", map[string]any{"metadata": map[string]any{"name": SavedProxyConfigName, "namespace": "kube-system",
		"labels": map[string]any{ManagedByLabel: ManagedBy, RunLabel: "other-run"}}, "data": map[string]any{}})
	err = target.switchProxyMode(ctx, "nftables")
	if err == nil || !strings.Contains(err.Error(), "run other-run saved") {
		t.Errorf("switch: %v, want a refusal naming the other run", err)
	}
	if got := proxyConfigData(f); !maps.Equal(got, originalProxyConfig) {
		t.Error("the ConfigMap changed")
	}
}
