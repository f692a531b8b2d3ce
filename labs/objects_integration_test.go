package labs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs"
	"github.com/svclab/svclab/labs/network"
	"github.com/svclab/svclab/labs/traffic"
)

func clustersDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "clusters")
}

// TestIntegrationServiceNetworkingObjects applies clusters/workloads/
// servicenet.yaml (a Namespace, a StatefulSet with its headless Service, a
// DaemonSet, a selector-less Service with a hand-written EndpointSlice) to
// a two-node netns lab (clusters/nodeport.yaml): every pod runs, the
// headless Service has endpoints but no proxy rules, traffic to the
// selector-less Service's ClusterIP reaches the hand-listed pod, and
// delete -f removes it all.
func TestIntegrationServiceNetworkingObjects(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	opts := labs.Options{Binary: roottest.SharedBinary(t)}
	topo, err := os.ReadFile(filepath.Join(clustersDir(), "nodeport.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	name := roottest.UniqueName("objs")
	began := time.Now()
	lab, _, err := labs.Create(context.Background(), writeFile(t, "lab.yaml", strings.Replace(string(topo), "name: nodeport", "name: "+name, 1)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { labs.Delete(name) })
	t.Logf("create lab: %s", time.Since(began).Round(time.Millisecond))
	manifest := filepath.Join(clustersDir(), "workloads", "servicenet.yaml")
	began = time.Now()
	if err := lab.Apply(context.Background(), manifest, opts); err != nil {
		t.Fatal(err)
	}
	t.Logf("apply servicenet.yaml: %s", time.Since(began).Round(time.Millisecond))

	objs, _, err := lab.Store.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	objs = userObjects(objs)
	perNode := map[string]int{}
	for _, p := range objs.Pods {
		if row := podRow(t, lab, p.Name); row.Status != labstore.StateRunning {
			t.Errorf("pod %s: %s, want Running", p.Name, row.Status)
		}
		if strings.HasPrefix(p.Name, "agent-") {
			perNode[p.Spec.NodeName]++
		}
	}
	if len(objs.Pods) != 5 || objs.Pod("db-0") == nil || objs.Pod("db-1") == nil || perNode["hosta"] != 1 || perNode["hostb"] != 1 {
		t.Errorf("pods %d (want db-0, db-1, legacy and one agent per node: %v)", len(objs.Pods), perNode)
	}
	db := sliceOf(objs, "shop", "db")
	if db == nil || len(db.Endpoints) != 2 {
		t.Errorf("headless Service db: slice %+v, want 2 endpoints", db)
	}
	legacy := objs.Service("shop", "legacy")
	if s := sliceOf(objs, "shop", "legacy"); s == nil || s.Name != "legacy-1" {
		t.Errorf("selector-less Service legacy: slice %+v, want only the hand-written legacy-1", s)
	}
	for _, node := range []string{"hosta", "hostb"} {
		rules := natRules(t, name, node)
		if strings.Contains(rules, "shop/db") {
			t.Errorf("node %s has rules for the headless Service shop/db:\n%s", node, rules)
		}
		if !strings.Contains(rules, "10.100.81.200:8080") {
			t.Errorf("node %s has no rule for the hand-listed endpoint 10.100.81.200:8080:\n%s", node, rules)
		}
	}
	began = time.Now()
	res, err := lab.Traffic("hosta", traffic.Options{Target: legacy.Spec.ClusterIP + ":80", Connections: 20}, opts)
	t.Logf("traffic: %s", time.Since(began).Round(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if res.Succeeded != 20 || res.Backends["legacy"] != 20 {
		t.Errorf("traffic from hosta to the selector-less Service %s:80: %d of 20 answered, backends %v; want all from the hand-listed pod legacy", legacy.Spec.ClusterIP, res.Succeeded, res.Backends)
	}

	// A deleted StatefulSet pod comes back under its name once it is gone,
	// and runs (its host is made again).
	if err := lab.DeletePods(context.Background(), []string{"db-1"}, opts, labs.DeleteOptions{GracePeriod: 1}); err != nil {
		t.Fatal(err)
	}
	objs, _, _ = lab.Store.ReadObjects()
	if p := objs.Pod("db-1"); p == nil || p.DeletionTimestamp != nil || podRow(t, lab, "db-1").Status != labstore.StateRunning {
		t.Errorf("db-1 after its deletion: %+v, %s; want it made again and Running", p, podRow(t, lab, "db-1").Status)
	}

	before, _ := network.Namespaces(name)
	began = time.Now()
	if err := lab.DeleteManifest(context.Background(), manifest, opts, labs.DeleteOptions{GracePeriod: -1}); err != nil {
		t.Fatal(err)
	}
	t.Logf("delete -f servicenet.yaml (waits for the 5 pods): %s", time.Since(began).Round(time.Millisecond))
	objs, _, _ = lab.Store.ReadObjects()
	objs = userObjects(objs)
	if len(objs.Pods)+len(objs.Services)+len(objs.EndpointSlices)+len(objs.Namespaces) != 0 {
		t.Errorf("after delete -f: %d pods, %d services, %d slices, %d namespaces", len(objs.Pods), len(objs.Services), len(objs.EndpointSlices), len(objs.Namespaces))
	}
	if after, _ := network.Namespaces(name); len(before)-len(after) != 5 {
		t.Errorf("delete -f removed %d network namespaces, want the 5 pods' (before %v, after %v)", len(before)-len(after), before, after)
	}
	began = time.Now()
	defer func() { t.Logf("the second and third delete -f: %s", time.Since(began).Round(time.Millisecond)) }()
	if err := lab.DeleteManifest(context.Background(), manifest, opts, labs.DeleteOptions{GracePeriod: -1}); err == nil || !strings.Contains(err.Error(), `namespaces "shop" not found`) {
		t.Errorf("a second delete -f: %v, want NotFound", err)
	}
	if err := lab.DeleteManifest(context.Background(), manifest, opts, labs.DeleteOptions{GracePeriod: -1, IgnoreNotFound: true}); err != nil {
		t.Errorf("a second delete -f --ignore-not-found: %v", err)
	}
}

func sliceOf(st *labstore.State, namespace, service string) *discoveryv1.EndpointSlice {
	for _, s := range st.EndpointSlices {
		if s.Namespace == namespace && s.Labels[discoveryv1.LabelServiceName] == service {
			return s
		}
	}
	return nil
}

// slowPod answers for 4 s after SIGTERM (agnhost's --delay-shutdown) and
// has a grace period of 30 s.
const slowPod = `
apiVersion: v1
kind: Pod
metadata: {name: slow, labels: {app: slow}}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - name: c
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    args: [netexec, --http-port=8080, --delay-shutdown=4]
    ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: slow}
spec: {selector: {app: slow}, ports: [{port: 80, targetPort: 8080}]}
`

// TestIntegrationDeletedPodTerminates: a deleted pod's endpoint is
// terminating (ready=false, serving=true) while its server still answers
// after SIGTERM; the proxy keeps it as the Service's serving-terminating
// fallback, so traffic still reaches it; an interrupted delete leaves it
// terminating, and the next command removes it once its server has
// stopped — long before the 30 s grace period ends.
func TestIntegrationDeletedPodTerminates(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	opts := labs.Options{Binary: roottest.SharedBinary(t)}
	name := roottest.UniqueName("term")
	lab, _, err := labs.Create(context.Background(), writeFile(t, "lab.yaml", strings.ReplaceAll(topology, "NAME", name)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { labs.Delete(name) })
	if err := lab.Apply(context.Background(), writeFile(t, "slow.yaml", slowPod), opts); err != nil {
		t.Fatal(err)
	}
	objs, _, _ := lab.Store.ReadObjects()
	clusterIP := objs.Service("default", "slow").Spec.ClusterIP
	podIP := objs.Pod("slow").Status.PodIP

	// Delete, and stop waiting (as Ctrl-C would) once the pod is terminating.
	ctx, cancel := context.WithCancel(context.Background())
	deleted := make(chan error, 1)
	start := time.Now()
	go func() { deleted <- lab.DeletePods(ctx, []string{"slow"}, opts, labs.DeleteOptions{GracePeriod: -1}) }()
	var ep discoveryv1.Endpoint
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		objs, _, _ = lab.Store.ReadObjects()
		if s := sliceOf(objs, "default", "slow"); s != nil && len(s.Endpoints) == 1 && *s.Endpoints[0].Conditions.Terminating {
			ep = s.Endpoints[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the endpoint of the deleted pod never turned terminating: %+v", sliceOf(objs, "default", "slow"))
		}
	}
	if *ep.Conditions.Ready || !*ep.Conditions.Serving {
		t.Errorf("terminating endpoint: ready %v serving %v, want ready=false serving=true", *ep.Conditions.Ready, *ep.Conditions.Serving)
	}
	if row := podRow(t, lab, "slow"); row.Status != "Terminating" {
		t.Errorf("get pods: %s, want Terminating", row.Status)
	}
	// The proxy's view: the Service has no ready endpoint, so it uses the
	// serving-terminating one; the server answers during its delay.
	if rules := natRules(t, name, "node1"); !strings.Contains(rules, podIP+":8080") {
		t.Errorf("node1's rules do not send to the serving-terminating endpoint %s:8080:\n%s", podIP, rules)
	}
	res, err := lab.Traffic("node1", traffic.Options{Target: clusterIP + ":80", Connections: 5}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Backends["slow"] != 5 {
		t.Errorf("traffic to %s:80 while slow terminates: backends %v failures %v, want all 5 from slow", clusterIP, res.Backends, res.Failures)
	}
	cancel()
	if err := <-deleted; err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "still terminating") {
		t.Errorf("interrupted delete: %v, want it to say the pod is still terminating", err)
	}
	objs, _, _ = lab.Store.ReadObjects()
	if p := objs.Pod("slow"); p == nil || p.DeletionTimestamp == nil {
		t.Fatalf("after the interrupted delete the pod is not terminating: %+v", p)
	}

	// The next command removes it once its server has stopped (4 s after
	// SIGTERM, well before the 30 s deadline).
	for time.Since(start) < 6*time.Second {
		time.Sleep(100 * time.Millisecond)
	}
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
	if ns, _ := network.Namespaces(name); contains(ns, network.NamespaceName(name, "slow")) {
		t.Errorf("the pod's network namespace is left: %v", ns)
	}

	// --grace-period shorter than the server's delay: SIGKILL at the deadline.
	if err := lab.Apply(context.Background(), writeFile(t, "slow.yaml", slowPod), opts); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := lab.DeletePods(context.Background(), []string{"slow"}, opts, labs.DeleteOptions{GracePeriod: 1}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3500*time.Millisecond {
		t.Errorf("delete --grace-period=1 of a server that delays 4 s took %s", took)
	}
	objs, _, _ = lab.Store.ReadObjects()
	if objs.Pod("slow") != nil {
		t.Errorf("pod left after a waited delete")
	}
}

// userObjects leaves out the lab's own kube-system objects (the coredns
// pod, the kube-dns Service and its slice).
func userObjects(st *labstore.State) *labstore.State {
	out := st.Clone()
	out.Pods = slices.DeleteFunc(out.Pods, func(p *corev1.Pod) bool { return p.Namespace == "kube-system" })
	out.Services = slices.DeleteFunc(out.Services, func(s *corev1.Service) bool { return s.Namespace == "kube-system" })
	out.EndpointSlices = slices.DeleteFunc(out.EndpointSlices, func(s *discoveryv1.EndpointSlice) bool { return s.Namespace == "kube-system" })
	return out
}
