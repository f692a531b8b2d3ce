package kube

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/golden"
)

// TestAgentDaemonSetGolden: the node agent's whole DaemonSet, as the
// cluster gets it.
func TestAgentDaemonSetGolden(t *testing.T) {
	ds := agentDaemonSet(Options{Image: "registry.example/svclab@sha256:0123", PullPolicy: "IfNotPresent",
		NodeSelector: map[string]string{"svclab.dev/conformance": "yes"}}, "20250101t000000-abcde")
	out, err := yaml.Marshal(ds)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "agent-daemonset.golden.yaml", out)
}

// TestAgentIsLeastPrivilege: not privileged, every capability dropped but
// the four it needs, no escalation, no token, no toleration unless asked,
// resource limits, the labels cleanup looks for.
func TestAgentIsLeastPrivilege(t *testing.T) {
	ds := agentDaemonSet(Options{Image: "i", PullPolicy: "Always"}, "run-1")
	spec := ds.Spec.Template.Spec
	c := spec.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.Privileged == nil || *sc.Privileged {
		t.Errorf("privileged: %+v, want explicitly false", sc)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the root filesystem is writable")
	}
	if !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("drops %v, want ALL", sc.Capabilities.Drop)
	}
	if want := []corev1.Capability{"NET_ADMIN", "NET_RAW", "SYS_CHROOT", "SYS_PTRACE"}; !slices.Equal(sc.Capabilities.Add, want) {
		t.Errorf("adds %v, want %v", sc.Capabilities.Add, want)
	}
	if !spec.HostNetwork || !spec.HostPID {
		t.Error("the agent must share the node's network and PID namespaces")
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the agent mounts a service-account token")
	}
	if len(spec.Tolerations) != 0 {
		t.Errorf("tolerations %v without TolerateAll", spec.Tolerations)
	}
	if c.Resources.Limits.Memory().IsZero() || c.Resources.Limits.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resources %+v: want requests and limits", c.Resources)
	}
	for _, labels := range []map[string]string{ds.Labels, ds.Spec.Template.Labels} {
		if labels[NameLabel] != agentName || labels[ManagedByLabel] != ManagedBy || labels[RunLabel] != "run-1" {
			t.Errorf("labels %v: want name, managed-by and the run", labels)
		}
	}
	all := agentDaemonSet(Options{TolerateAll: true}, "run-1").Spec.Template.Spec.Tolerations
	if len(all) != 1 || all[0].Operator != corev1.TolerationOpExists || all[0].Key != "" {
		t.Errorf("TolerateAll: tolerations %v, want [{operator: Exists}]", all)
	}
}

// failingPods makes the fake kubelet leave the pods whose name starts
// with prefix waiting with reason and message.
func failingPods(prefix, reason, message string) func(f *fakeAPI, pod map[string]any) {
	return func(f *fakeAPI, pod map[string]any) {
		if !strings.HasPrefix(str(meta(pod)["name"]), prefix) {
			return
		}
		pod["status"] = map[string]any{"phase": "Pending", "containerStatuses": []any{map[string]any{
			"name": "agent", "ready": false, "image": "reg/svclab:nope",
			"state": map[string]any{"waiting": map[string]any{"reason": reason, "message": message}},
		}}}
	}
}

// TestAgentPullFailureIsReportedAtOnce: an agent image that does not pull
// fails New at the first ImagePullBackOff, not at the end of the wait,
// with the pod, its node and the kubelet's reason and message; nothing
// is left behind.
func TestAgentPullFailureIsReportedAtOnce(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	f.podStatus = failingPods(agentName, "ImagePullBackOff", `Back-off pulling image "reg/svclab:nope": not found`)
	_, err := New(context.Background(), cfg, Options{Source: "fake", Image: "reg/svclab:nope", ReadyTimeout: time.Hour})
	if err == nil {
		t.Fatal("New: no error, want the pull failure")
	}
	for _, want := range []string{"on n1: ImagePullBackOff: Back-off pulling image \"reg/svclab:nope\": not found", "pod svclab-agent-"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if nss := f.list("namespaces", ""); len(nss) != 0 {
		t.Errorf("left namespaces %v", nss)
	}
}

// TestPullFailureMessageFromEvents: a waiting status without a message
// takes the message of the pod's latest Failed event.
func TestPullFailureMessageFromEvents(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	fail := failingPods(agentName, "ErrImagePull", "")
	f.podStatus = func(f *fakeAPI, pod map[string]any) {
		fail(f, pod)
		m := meta(pod)
		for i, msg := range []string{"Failed to pull image: an older try", `Failed to pull image "reg/svclab:nope": 401 Unauthorized`} {
			f.putLocked("events", map[string]any{
				"metadata":       map[string]any{"name": str(m["name"]) + ".e" + string(rune('0'+i)), "namespace": m["namespace"]},
				"involvedObject": map[string]any{"kind": "Pod", "name": m["name"], "namespace": m["namespace"]},
				"reason":         "Failed", "message": msg, "type": "Warning",
				"lastTimestamp": time.Date(2025, 1, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339),
			})
		}
	}
	_, err := New(context.Background(), cfg, Options{Source: "fake", Image: "reg/svclab:nope", ReadyTimeout: time.Hour})
	if err == nil || !strings.Contains(err.Error(), `ErrImagePull: Failed to pull image "reg/svclab:nope": 401 Unauthorized`) {
		t.Errorf("error %v, want the latest Failed event's message", err)
	}
}

// TestAgentOnNoNodeSaysWhy: a node selector no node matches fails at once
// and names the selector and --tolerate-all.
func TestAgentOnNoNodeSaysWhy(t *testing.T) {
	_, cfg := newFakeAPI(t, "n1")
	_, err := New(context.Background(), cfg, Options{Source: "fake", Image: "i", ReadyTimeout: time.Hour,
		NodeSelector: map[string]string{"pool": "conformance"}})
	if err == nil {
		t.Fatal("New: no error, want one saying the agent runs on no node")
	}
	for _, want := range []string{"runs on no node", "pool=conformance", "--tolerate-all"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestNodesAreTheAgentsNodes: the scenarios see only the nodes the agent
// runs on.
func TestNodesAreTheAgentsNodes(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1", "n2", "n3")
	node := f.get("nodes", "", "n2")
	meta(node)["labels"].(map[string]any)["pool"] = "conformance"
	target, err := New(context.Background(), cfg, Options{Source: "fake", Image: "i", NodeSelector: map[string]string{"pool": "conformance"}})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close(context.Background())
	nodes, err := target.nodes(context.Background())
	if err != nil || len(nodes) != 1 || nodes[0].Name != "n2" || nodes[0].IP.String() != "172.18.0.3" {
		t.Errorf("nodes %v %v, want n2 (172.18.0.3) only", nodes, err)
	}
}
