package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

// txnSlow is a pod whose server answers 3 s more after SIGTERM, with the
// default grace period of 30 s.
const txnSlow = `
apiVersion: v1
kind: Pod
metadata: {name: slow, labels: {app: slow}}
spec:
  containers:
  - name: c
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    args: [netexec, --http-port=8080, --delay-shutdown=3]
    ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: slow}
spec: {selector: {app: slow}, ports: [{port: 80, targetPort: 8080}]}
`

// TestIntegrationInterruptedPodDeletionIsRecoverable interrupts `delete pod`
// during the pod's grace period three ways — kill -9 right after its
// commit (before the SIGTERM), kill -9 while it waits, Ctrl-C while it
// waits — and each time the pod is shown Terminating, and the next command
// on the lab, once the server has stopped, removes it and its namespace.
func TestIntegrationInterruptedPodDeletionIsRecoverable(t *testing.T) {
	roottest.Require(t, "builds labs from network namespaces")
	l := newTxnLab(t, roottest.SharedBinary(t), "grace")
	if out, code := l.run(nil, "create", "lab", "--config", l.topo); code != 0 {
		t.Fatalf("create (exit %d):\n%s", code, out)
	}
	slow := filepath.Join(l.dir, "slow.yaml")
	if err := os.WriteFile(slow, []byte(txnSlow), 0o644); err != nil {
		t.Fatal(err)
	}
	cm := filepath.Join(l.dir, "cm.yaml")
	if err := os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deletePod := []string{"delete", "pod", "--lab", l.name, "slow"}
	for _, interrupt := range []string{"kill -9 after the commit", "kill -9 while waiting", "Ctrl-C while waiting"} {
		if out, code := l.run(nil, "apply", "--lab", l.name, "-f", slow); code != 0 {
			t.Fatalf("%s: apply (exit %d):\n%s", interrupt, code, out)
		}
		switch interrupt {
		case "kill -9 after the commit":
			l.crash("update:commit", deletePod...)
			// The next command finishes the commit and sends the SIGTERM
			// (without it the server would run until the 30 s deadline,
			// and the apply below would find it still terminating).
			if out, code := l.run(nil, "apply", "--lab", l.name, "-f", cm); code != 0 {
				t.Fatalf("%s: the next apply (exit %d):\n%s", interrupt, code, out)
			}
		case "kill -9 while waiting":
			l.interruptWith("pod/slow terminating", syscall.SIGKILL, nil, deletePod...)
		case "Ctrl-C while waiting":
			out, code := l.interruptWith("pod/slow terminating", syscall.SIGINT, nil, deletePod...)
			if code != 130 || !strings.Contains(out, "still terminating") {
				t.Errorf("%s: exit %d, want 130 and that the pod is still terminating:\n%s", interrupt, code, out)
			}
		}
		if out, _ := l.run(nil, "get", "pods", "--lab", l.name); !podLineHas(out, "slow", "Terminating") {
			t.Errorf("%s: get pods does not show slow Terminating:\n%s", interrupt, out)
		}
		l.assertShown(interrupt)
		l.waitServerStopped(interrupt, "slow")
		if out, code := l.run(nil, "apply", "--lab", l.name, "-f", cm); code != 0 || !strings.Contains(out, "pod/slow deleted") {
			t.Errorf("%s: the next apply (exit %d) did not remove the finished pod:\n%s", interrupt, code, out)
		}
		if pods, _ := network.Pods(l.name); len(pods) != 1 || !strings.HasPrefix(pods[0].Name, "coredns-") {
			t.Errorf("%s: pods in the kernel: %v, want only the lab's coredns pod", interrupt, pods)
		}
	}
}

// podLineHas says whether get pods shows pod with want on its line.
func podLineHas(out, pod, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && slices.Contains(f[:min(2, len(f))], pod) && strings.Contains(line, want) {
			return true // NAME first, or after NAMESPACE with -A
		}
	}
	return false
}

// waitServerStopped waits until the pod's server has stopped (it answers
// 3 s after it is told its pod terminates, then stops): the state in which
// the next command removes a terminating pod. The bound is the pod's grace
// period and more.
func (l *txnLab) waitServerStopped(when, pod string) {
	l.t.Helper()
	lab, err := netns.Open(l.name)
	if err != nil {
		l.t.Fatalf("%s: %v", when, err)
	}
	for end := time.Now().Add(2 * time.Minute); lab.PodServerRunning(pod); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			l.t.Fatalf("%s: pod %s's server still runs 2 minutes after it was told to terminate", when, pod)
		}
	}
}
