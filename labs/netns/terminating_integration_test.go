package netns_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

// slowPod is a pod whose server answers for delay seconds after SIGTERM
// (agnhost's --delay-shutdown), with a grace period of 30 s, behind the
// Service slow.
func slowPod(delay int) string {
	return fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata: {name: slow, labels: {app: slow}}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - name: c
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    args: [netexec, --http-port=8080, --delay-shutdown=%d]
    ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: slow}
spec: {selector: {app: slow}, ports: [{port: 80, targetPort: 8080}]}
`, delay)
}

// terminatingDelay is how long the slow server answers after SIGTERM in
// the tests that send it traffic meanwhile: the traffic (5 connections)
// takes well under a second even with both cores busy.
const terminatingDelay = 10

// TestIntegrationDeletedPodTerminates: once the proxies have a deleted
// pod's endpoint as terminating (ready=false, serving=true) the pod gets
// SIGTERM; its server still answers during its shutdown delay and the
// proxy keeps it as the Service's serving-terminating fallback, so traffic
// still reaches it; Ctrl-C then (while delete waits for the pod to go)
// leaves it terminating, and the next command removes it once its server
// has stopped, long before the 30 s grace period ends.
func TestIntegrationDeletedPodTerminates(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	lab, opts := terminatingLab(t, "term")
	if err := lab.Apply(context.Background(), writeFile(t, "slow.yaml", slowPod(terminatingDelay)), opts); err != nil {
		t.Fatal(err)
	}
	objs, _, _ := lab.Store.ReadObjects()
	clusterIP := objs.Service("default", "slow").Spec.ClusterIP
	podIP := objs.Pod("slow").Status.PodIP

	// Delete, and stop waiting (as Ctrl-C would) once delete says the pod
	// got SIGTERM: the line it prints after the proxies acknowledged.
	out := newLineWatch("pod/slow terminating (")
	opts.Out = out
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deleted := make(chan error, 1)
	go func() { deleted <- lab.DeletePods(ctx, []string{"slow"}, opts, netns.DeleteOptions{GracePeriod: -1}) }()
	select {
	case <-out.seen:
	case err := <-deleted:
		t.Fatalf("delete returned before the pod was terminating: %v\n%s", err, out)
	}
	cancel()
	if err := <-deleted; err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "still terminating") {
		t.Fatalf("interrupted delete: %v, want it to say the pod is still terminating", err)
	}

	objs, _, _ = lab.Store.ReadObjects()
	if p := objs.Pod("slow"); p == nil || p.DeletionTimestamp == nil {
		t.Fatalf("after the interrupted delete the pod is not terminating: %+v", p)
	}
	s := sliceOf(objs, "default", "slow")
	if s == nil || len(s.Endpoints) != 1 || !*s.Endpoints[0].Conditions.Terminating {
		t.Fatalf("the endpoint of the deleted pod is not terminating: %+v", s)
	}
	if c := s.Endpoints[0].Conditions; *c.Ready || !*c.Serving {
		t.Errorf("terminating endpoint: ready %v serving %v, want ready=false serving=true", *c.Ready, *c.Serving)
	}
	if row := podRow(t, lab, "slow"); row.Status != "Terminating" {
		t.Errorf("get pods: %s, want Terminating", row.Status)
	}
	// The proxy's view: the Service has no ready endpoint, so it uses the
	// serving-terminating one; the server answers during its delay.
	if rules := natRules(t, lab.Name(), "node1"); !strings.Contains(rules, podIP+":8080") {
		t.Errorf("node1's rules do not send to the serving-terminating endpoint %s:8080:\n%s", podIP, rules)
	}
	res, err := lab.Traffic("node1", traffic.Options{Target: clusterIP + ":80", Connections: 5}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Backends["slow"] != 5 {
		t.Errorf("traffic to %s:80 while slow terminates: backends %v failures %v, want all 5 from slow", clusterIP, res.Backends, res.Failures)
	}

	// The next command removes it once its server has stopped (at the end
	// of its delay, well before the 30 s deadline).
	waitServerStopped(t, lab, "slow")
	if err := lab.Apply(context.Background(), writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), opts); err != nil {
		t.Fatal(err)
	}
	objs, _, _ = lab.Store.ReadObjects()
	if objs.Pod("slow") != nil {
		t.Errorf("the next command left the finished pod")
	}
	if s := sliceOf(objs, "default", "slow"); s == nil || len(s.Endpoints) != 0 {
		t.Errorf("slice after the pod is gone: %+v", s)
	}
	if ns, _ := network.Namespaces(lab.Name()); contains(ns, network.NamespaceName(lab.Name(), "slow")) {
		t.Errorf("the pod's network namespace is left: %v", ns)
	}
}

// TestIntegrationDeleteInterruptedBeforeTheProxies: Ctrl-C while `delete
// pod` waits for the proxies to have the pod terminating. The deletion was
// stored, as an API server's is, so it is not rolled back to a Running
// pod: the pod is Terminating, it got no SIGTERM yet (a proxy may still
// send it new connections), the lab says the interrupted delete is
// incomplete, and the next command finishes it: it waits for the proxies,
// then sends the SIGTERM, and the pod goes once its server stopped.
func TestIntegrationDeleteInterruptedBeforeTheProxies(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	lab, opts := terminatingLab(t, "termproxy")
	if err := lab.Apply(context.Background(), writeFile(t, "slow.yaml", slowPod(0)), opts); err != nil {
		t.Fatal(err)
	}
	if !lab.PodServerRunning("slow") {
		t.Fatal("pod slow's server does not run")
	}

	// The proxy cannot acknowledge while it is stopped.
	proxy := lab.ProxyPID("node1")
	if proxy == 0 {
		t.Fatal("node1 has no proxy")
	}
	if err := syscall.Kill(proxy, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var resume sync.Once
	cont := func() { resume.Do(func() { syscall.Kill(proxy, syscall.SIGCONT) }) } //nolint:errcheck // gone: nothing to resume
	t.Cleanup(cont)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deleted := make(chan error, 1)
	go func() { deleted <- lab.DeletePods(ctx, []string{"slow"}, opts, netns.DeleteOptions{GracePeriod: -1}) }()
	// The store holds the deletion before delete waits for the proxies.
	pollUntil(t, "the deletion is stored", func() bool {
		objs, _, _ := lab.Store.ReadObjects()
		p := objs.Pod("slow")
		return p != nil && p.DeletionTimestamp != nil
	})
	cancel()
	err := <-deleted
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted while waiting for the proxies") ||
		!strings.Contains(err.Error(), "the next command on the lab finishes it: pod slow still terminating") || strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("delete interrupted while waiting for the proxies: %v\nwant it to say the pod is still terminating and the next command finishes it", err)
	}
	if row := podRow(t, lab, "slow"); row.Status != "Terminating" || row.Ready != "1/1" {
		t.Errorf("get pods after the interrupt: %s %s, want Terminating with its server still running (1/1)", row.Status, row.Ready)
	}
	if !lab.PodServerRunning("slow") {
		t.Errorf("the pod's server stopped: it was told to terminate before the proxies had the pod terminating")
	}
	if got := netns.Interrupted(lab.Name()); !strings.Contains(got, "incomplete (delete pods interrupted") {
		t.Errorf("get labs after the interrupt: %q, want it to say the delete is incomplete", got)
	}

	// The next command finishes the delete: the proxy acknowledges, the
	// pod gets SIGTERM, its server (no shutdown delay) exits, and the
	// command after that finds it gone.
	cont()
	var log strings.Builder
	opts.Out = &log
	if err := lab.Apply(context.Background(), writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "was finished") {
		t.Errorf("the next command did not say it finished the interrupted delete:\n%s", log.String())
	}
	// Its recover sent the SIGTERM, after the proxies' wait (the apply's
	// own step 7 prints no line for a pod that was terminating already).
	if !strings.Contains(log.String(), "pod/slow terminating (") {
		t.Errorf("the next command's recover did not send the interrupted delete's SIGTERM:\n%s", log.String())
	}
	// The apply may have reaped the pod already (its server stops at once).
	pollUntil(t, "pod slow's server stopped", func() bool { return !lab.PodServerRunning("slow") })
	if err := lab.Apply(context.Background(), writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), opts); err != nil {
		t.Fatal(err)
	}
	if objs, _, _ := lab.Store.ReadObjects(); objs.Pod("slow") != nil {
		t.Errorf("the pod is left after its server stopped")
	}
	if got := netns.Interrupted(lab.Name()); got != "" {
		t.Errorf("get labs after the next commands: %q, want nothing interrupted", got)
	}
}

// TestIntegrationDeleteGracePeriodKills: with --grace-period shorter than
// the server's shutdown delay, the server is killed at the deadline and the
// waited delete returns then, not when the server would have stopped.
func TestIntegrationDeleteGracePeriodKills(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	lab, opts := terminatingLab(t, "termkill")
	// The server would answer for 60 s after SIGTERM.
	if err := lab.Apply(context.Background(), writeFile(t, "slow.yaml", slowPod(60)), opts); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := lab.DeletePods(context.Background(), []string{"slow"}, opts, netns.DeleteOptions{GracePeriod: 1}); err != nil {
		t.Fatal(err)
	}
	// Killed at the 1 s deadline: the delete returns after two proxy
	// syncs and the kill, a few seconds on a loaded machine; had it waited
	// for the server it would have taken a minute.
	t.Logf("delete took %s", time.Since(start))
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("delete --grace-period=1 of a server that delays 60 s took %s: it was not killed at the deadline", took)
	}
	if objs, _, _ := lab.Store.ReadObjects(); objs.Pod("slow") != nil {
		t.Errorf("pod left after a waited delete")
	}
}

// terminatingLab creates the one-node lab of these tests, deleted at the end.
func terminatingLab(t *testing.T, prefix string) (*netns.Lab, netns.Options) {
	t.Helper()
	opts := netns.Options{Binary: roottest.SharedBinary(t)}
	name := roottest.UniqueName(prefix)
	lab, _, err := netns.Create(context.Background(), writeFile(t, "lab.yaml", strings.ReplaceAll(topology, "NAME", name)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netns.Delete(name) })
	return lab, opts
}

// waitServerStopped waits until a terminating pod's server has stopped:
// what the lab checks before it removes the pod.
func waitServerStopped(t *testing.T, lab *netns.Lab, pod string) {
	t.Helper()
	pollUntil(t, "pod "+pod+"'s server stopped", func() bool { return !lab.PodServerRunning(pod) })
}

// pollUntil polls cond until it holds; a minute without it fails the test.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	limit := time.NewTimer(time.Minute)
	defer limit.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-limit.C:
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// lineWatch is an Options.Out that closes seen once a line contains want.
type lineWatch struct {
	want string
	seen chan struct{}
	mu   sync.Mutex
	buf  strings.Builder
	once sync.Once
}

func newLineWatch(want string) *lineWatch {
	return &lineWatch{want: want, seen: make(chan struct{})}
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
