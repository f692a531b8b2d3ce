package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/svclab/svclab/labs/agents/selfexec"
)

const agentName = "svclab-node-agent"

// agentManifest is the node agent: svclab's image on every node, in the
// node's network and PID namespaces (privileged: it reads conntrack over
// netlink and chroots into the node's root filesystem).
const agentManifest = `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: svclab-node-agent}
spec:
  selector: {matchLabels: {app: svclab-node-agent}}
  template:
    metadata: {labels: {app: svclab-node-agent}}
    spec:
      hostNetwork: true
      hostPID: true
      tolerations: [{operator: Exists}]
      terminationGracePeriodSeconds: 1
      containers:
      - name: agent
        image: {{IMAGE}}
        imagePullPolicy: {{PULL}}
        command: {{COMMAND}}
        securityContext: {privileged: true}
`

func (t *Target) startAgent(ctx context.Context) error {
	command, _ := json.Marshal(selfexec.Argv("/svclab", &selfexec.NodeAgent{})) // strings always marshal
	m := strings.NewReplacer("{{IMAGE}}", t.opts.Image, "{{PULL}}", t.opts.PullPolicy, "{{COMMAND}}", string(command)).Replace(agentManifest)
	if err := t.apply(ctx, t.agentNS, m); err != nil {
		return fmt.Errorf("node agent: %w", err)
	}
	return t.poll(ctx, "the node agent on every node", func() (bool, error) {
		var ds appsv1.DaemonSet
		if err := t.res.Get(ctx, agentName, t.agentNS, &ds); err != nil {
			return false, err
		}
		return daemonSetReady(&ds), nil
	})
}

// agentPod is the node agent's pod on a node.
func (t *Target) agentPod(ctx context.Context, node string) (string, error) {
	var pods corev1.PodList
	if err := t.res.WithNamespace(t.agentNS).List(ctx, &pods, resources.WithLabelSelector("app="+agentName),
		resources.WithFieldSelector("spec.nodeName="+node)); err != nil {
		return "", err
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("no running node agent on %s", node)
}

// onNode runs an svclab command in the node agent on a node.
func (t *Target) onNode(ctx context.Context, node string, c selfexec.Command) (string, error) {
	pod, err := t.agentPod(ctx, node)
	if err != nil {
		return "", err
	}
	return t.exec(ctx, t.agentNS, pod, "agent", selfexec.Argv("/svclab", c)...)
}

// iptablesSave runs the node's own iptables-save. A node may have rules in
// either backend (the proxy's image decides, e.g. upstream's
// iptables-wrapper): the first of iptables-save, iptables-nft-save and
// iptables-legacy-save that shows KUBE-SERVICES wins.
func (t *Target) iptablesSave(ctx context.Context, node, table string, counters bool) (string, error) {
	var first string
	var firstErr error
	for i, bin := range []string{"iptables-save", "iptables-nft-save", "iptables-legacy-save"} {
		argv := []string{bin, "-t", table}
		if counters {
			argv = append(argv, "-c")
		}
		out, err := t.onNode(ctx, node, &selfexec.NodeRun{Argv: argv})
		if i == 0 {
			first, firstErr = out, err
		}
		if err == nil && strings.Contains(out, ":KUBE-SERVICES") {
			return out, nil
		}
	}
	return first, firstErr
}

func mustAddr(s string) netip.Addr {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a
}
