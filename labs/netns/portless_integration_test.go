package netns_test

import (
	"context"
	"os/exec"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

const portlessPod = `
apiVersion: v1
kind: Pod
metadata: {name: sleeper}
spec:
  nodeName: node1
  containers: [{name: c, image: busybox, command: [sleep, "3600"]}]
`

// TestIntegrationPortlessPodIsItsNamespace: a pod without containerPorts
// runs no process, so it is its network namespace: Running and Ready while
// the kernel has it, and no longer once the namespace is deleted behind the
// lab's back (get pods says NetworkNamespaceMissing, the Pod object is
// Unknown and not Ready); the lab's delete still removes everything.
func TestIntegrationPortlessPodIsItsNamespace(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	opts := netns.Options{Binary: roottest.SharedBinary(t)}
	lab := createWebLab(t, "portless", opts)
	if err := lab.Apply(context.Background(), writeFile(t, "sleeper.yaml", portlessPod), opts); err != nil {
		t.Fatal(err)
	}
	if row := podRow(t, lab, "sleeper"); row.Status != "Running" || row.Ready != "1/1" {
		t.Fatalf("sleeper with its namespace: %+v, want Running 1/1", row)
	}
	if p := podObject(t, lab, "sleeper"); p.Status.Phase != corev1.PodRunning || !p.Status.ContainerStatuses[0].Ready {
		t.Fatalf("sleeper's Pod with its namespace: %+v", p.Status)
	}

	ns := network.NamespaceName(lab.Name(), "sleeper")
	if out, err := exec.Command("ip", "netns", "delete", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns delete %s: %v: %s", ns, err, out)
	}
	if row := podRow(t, lab, "sleeper"); row.Status != netns.NetworkNamespaceMissing || row.Ready != "0/1" {
		t.Errorf("sleeper without its namespace: %+v, want %s 0/1", row, netns.NetworkNamespaceMissing)
	}
	p := podObject(t, lab, "sleeper")
	cs := p.Status.ContainerStatuses[0]
	if p.Status.Phase != corev1.PodUnknown || cs.Ready || cs.State.Waiting == nil || cs.State.Waiting.Reason != netns.NetworkNamespaceMissing {
		t.Errorf("sleeper's Pod without its namespace: phase %s, container %+v", p.Status.Phase, cs)
	}
	if row := podRow(t, lab, podOfDeployment(t, lab)); row.Status != "Running" {
		t.Errorf("a web pod beside it: %+v", row)
	}
	if err := netns.Delete(lab.Name()); err != nil {
		t.Fatal(err)
	}
	assertGone(t, lab.Name())
}

// podObject returns the lab's Pod object of a pod.
func podObject(t *testing.T, lab *netns.Lab, name string) *corev1.Pod {
	t.Helper()
	pods, err := lab.PodObjects(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no Pod %s", name)
	return nil
}

// podOfDeployment is one of the web Deployment's pods.
func podOfDeployment(t *testing.T, lab *netns.Lab) string {
	t.Helper()
	_, web := webPods(t, lab)
	if len(web) == 0 {
		t.Fatal("no web pod")
	}
	return web[0]
}
