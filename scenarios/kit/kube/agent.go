package kube

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/scenarios/kit"
)

const agentName = "svclab-node-agent"

// agentCapabilities are the only capabilities the node agent keeps, for
// what `svclab node …` does on the node:
//   - NET_ADMIN: conntrack dumps and nft listings are nfnetlink requests,
//     which the kernel answers only with it (iptables-nft-save too);
//   - NET_RAW: iptables-legacy-save reads the tables through a raw socket;
//   - SYS_CHROOT: `node run` chroots into the node's root filesystem;
//   - SYS_PTRACE: that root filesystem is /proc/1/root, which the kernel
//     opens only for a process that may ptrace-read the node's init (it
//     holds every capability, so the agent needs this one).
//
// `node route-source` (an RTM_GETROUTE), `node get` (HTTP to the node's
// 127.0.0.1) and `node agent` (waiting) need none.
var agentCapabilities = []corev1.Capability{"NET_ADMIN", "NET_RAW", "SYS_CHROOT", "SYS_PTRACE"}

// agentResources are the node agent's requests and limits. What it runs
// through exec runs in its container, so the limits bound those too.
// Measured (svclab built from this tree, a network namespace holding
// the rules): the idle agent's resident set is 47 MB (the request); an
// iptables-save of 55,000 kube-proxy-like rules (5,000 Services of three
// endpoints) peaks at 67 MB and 4 s of CPU, `node conntrack` of 20,000
// entries at 67 MB, and `nft -j` of those rules at 500 MB (libnftables'
// JSON): 1 GiB lets a cluster of that size be read, 1 CPU keeps it
// within seconds, and a scheduler reserves almost nothing for it.
var agentResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
}

// agentDaemonSet is the node agent: svclab's image on the chosen nodes,
// waiting to be exec'd into (`svclab node …`). It runs in the node's
// network namespace (hostNetwork: the node's conntrack table, routes and
// 127.0.0.1:10249 where the proxy serves /proxyMode and /metrics) and
// PID namespace (hostPID: /proc/1 is the node's init, whose root is the
// node's filesystem with its own iptables-save and nft). It is not
// privileged: root with only agentCapabilities, no privilege escalation,
// a read-only root filesystem, the runtime's seccomp profile, no
// service-account token (it never talks to the API server), resource
// requests and limits (agentResources). AppArmor is unconfined: the runtimes'
// default profiles allow ptrace only among their own containers, so
// they would deny /proc/1/root whatever the capabilities. It runs on the
// nodes NodeSelector picks, tolerating no taint unless TolerateAll.
func agentDaemonSet(opts Options, runID string) *appsv1.DaemonSet {
	selector := map[string]string{NameLabel: agentName, RunLabel: runID}
	labels := map[string]string{NameLabel: agentName, RunLabel: runID, ManagedByLabel: ManagedBy}
	var tolerations []corev1.Toleration
	if opts.TolerateAll {
		tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: agentName, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork:                   true,
					HostPID:                       true,
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					NodeSelector:                  opts.NodeSelector,
					Tolerations:                   tolerations,
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{
						Name:            "agent",
						Image:           opts.Image,
						ImagePullPolicy: corev1.PullPolicy(opts.PullPolicy),
						Command:         selfexec.Argv("/svclab", &selfexec.NodeAgent{}),
						Resources:       agentResources,
						SecurityContext: &corev1.SecurityContext{
							Privileged:               ptr.To(false),
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							RunAsUser:                ptr.To[int64](0),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: agentCapabilities},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
							AppArmorProfile:          &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined},
						},
					}},
				},
			},
		},
	}
}

// startAgent creates the node agent's DaemonSet and waits until it runs
// a ready pod on every node it should. A pod that cannot start (its
// image does not pull) fails the wait at once with the kubelet's reason;
// a selector that picks no node fails it too.
func (t *Target) startAgent(ctx context.Context) error {
	ds := agentDaemonSet(t.opts, t.runID)
	ds.Namespace = t.agentNS
	if err := t.res.Create(ctx, ds); err != nil {
		return fmt.Errorf("node agent: %w", err)
	}
	return t.poll(ctx, "the node agent on every node", t.failOnPodProblems(ctx, t.agentNS, func() (bool, error) {
		var ds appsv1.DaemonSet
		if err := t.res.Get(ctx, agentName, t.agentNS, &ds); err != nil {
			return false, err
		}
		if ds.Status.ObservedGeneration >= ds.Generation && ds.Generation > 0 && ds.Status.DesiredNumberScheduled == 0 {
			return false, stopPolling(errors.New(noAgentNodes(t.opts)))
		}
		if !daemonSetReady(&ds) {
			return false, fmt.Errorf("%d of %d node agent pods ready", ds.Status.NumberReady, ds.Status.DesiredNumberScheduled)
		}
		return true, nil
	}))
}

// noAgentNodes says why the node agent's DaemonSet schedules no pod.
func noAgentNodes(opts Options) string {
	msg := "the node agent's DaemonSet runs on no node"
	if len(opts.NodeSelector) > 0 {
		var sel []string
		for k, v := range opts.NodeSelector {
			sel = append(sel, k+"="+v)
		}
		sort.Strings(sel)
		msg += ": no node has the labels " + strings.Join(sel, ",") + " (--node-selector)"
	}
	if !opts.TolerateAll {
		msg += "; it tolerates no taint (--tolerate-all lets it run on tainted nodes, control planes too)"
	}
	return msg
}

// agentPods are the node agent's running pods by node name.
func (t *Target) agentPods(ctx context.Context) (map[string]string, error) {
	pods, err := t.clientset.CoreV1().Pods(t.agentNS).List(ctx, metav1.ListOptions{LabelSelector: NameLabel + "=" + agentName})
	if err != nil {
		return nil, err
	}
	byNode := map[string]string{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			byNode[p.Spec.NodeName] = p.Name
		}
	}
	return byNode, nil
}

// agentPod is the node agent's pod on a node.
func (t *Target) agentPod(ctx context.Context, node string) (string, error) {
	pods, err := t.agentPods(ctx)
	if err != nil {
		return "", err
	}
	pod, ok := pods[node]
	if !ok {
		return "", fmt.Errorf("no running node agent on %s (%s)", node, agentNodesHint(pods))
	}
	return pod, nil
}

// agentNodesHint names the nodes the agent runs on.
func agentNodesHint(pods map[string]string) string {
	var nodes []string
	for n := range pods {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	return "it runs on " + strings.Join(nodes, ", ")
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
// iptables-legacy-save that shows KUBE-SERVICES wins (the ip6tables ones
// for IPv6).
func (t *Target) iptablesSave(ctx context.Context, node, table string, counters bool, family corev1.IPFamily) (string, error) {
	var first string
	var firstErr error
	for i, bin := range kit.IPTablesSaveCommands(family) {
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
