package netnslab

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/scenarios/kit"
)

// The lab's proxy configuration: the ConfigMap every lab is made with.
const (
	labConfigMapNamespace = "kube-system"
	labConfigMapName      = "kube-proxy"
	labConfigKey          = "config.conf"
)

// labProxyFacts holds what LabTarget.Proxy found, once per run.
type labProxyFacts struct {
	mu    sync.Mutex
	done  bool
	proxy kit.Proxy
}

// Proxy is the labs' proxy as a lab shows it: svclab's proxy on every
// node, its configuration the lab's ConfigMap kube-system/kube-proxy, its
// mode /proxyMode of the node, its metrics :10249/metrics. The labs are
// made per workspace, so it makes a one-node lab of this target's
// topology to read them from, once per run, and deletes it.
func (t *LabTarget) Proxy(ctx context.Context) (kit.Proxy, error) {
	t.proxyFacts.mu.Lock()
	defer t.proxyFacts.mu.Unlock()
	if t.proxyFacts.done {
		return t.proxyFacts.proxy, nil
	}
	lab, err := NewLab(ctx, roottest.UniqueName("proxyfacts"), t.topology(1), t.Binary)
	if err != nil {
		return kit.Proxy{}, fmt.Errorf("a lab to read its proxy from: %w", err)
	}
	defer lab.Delete()
	p, err := lab.proxyFacts()
	if err != nil {
		return kit.Proxy{}, err
	}
	t.proxyFacts.proxy, t.proxyFacts.done = p, true
	return p, nil
}

// proxyFacts reads a lab's proxy: its ConfigMap, and /proxyMode and
// /metrics on its first node.
func (l *Lab) proxyFacts() (kit.Proxy, error) {
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		return kit.Proxy{}, err
	}
	cm := objs.ConfigMap(labConfigMapNamespace, labConfigMapName)
	if cm == nil {
		return kit.Proxy{}, fmt.Errorf("lab %s: no ConfigMap %s/%s", l.Name(), labConfigMapNamespace, labConfigMapName)
	}
	cfg, mode, err := kit.DecodeProxyConfig([]byte(cm.Data[labConfigKey]))
	if err != nil {
		return kit.Proxy{}, fmt.Errorf("lab %s: ConfigMap %s/%s: %w", l.Name(), labConfigMapNamespace, labConfigMapName, err)
	}
	node := l.Topology.Spec.Nodes[0].Name
	source := fmt.Sprintf("ConfigMap %s/%s, key %s (the lab's)", labConfigMapNamespace, labConfigMapName, labConfigKey)
	p := kit.Proxy{
		Kind: kit.ProxySvclab, Where: "`svclab proxy` on every lab node (pods kube-system/kube-proxy-<node>)",
		Mode: mode, ModeFrom: source, Config: cfg, ConfigFrom: source,
		ConfigMap: labConfigMapNamespace + "/" + labConfigMapName,
	}
	if out, err := l.Run(node, selfexec.Argv(l.Binary, &selfexec.NodeGet{URL: "http://127.0.0.1:10249/proxyMode"})...); err == nil {
		p.Mode, p.ModeFrom = strings.TrimSpace(out), "/proxyMode on node "+node
	}
	if out, err := l.Run(node, selfexec.Argv(l.Binary, &selfexec.NodeGet{URL: "http://127.0.0.1:10249/metrics"})...); err == nil {
		p.Metrics = strings.Contains(out, "kubeproxy_sync_proxy_rules_last_timestamp_seconds")
	}
	return p, nil
}
