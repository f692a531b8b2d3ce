package netns_test

import (
	"context"
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
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

func clustersDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "clusters")
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
	opts := netns.Options{Binary: roottest.SharedBinary(t)}
	topo, err := os.ReadFile(filepath.Join(clustersDir(), "nodeport.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	name := roottest.UniqueName("objs")
	began := time.Now()
	lab, _, err := netns.Create(context.Background(), writeFile(t, "lab.yaml", strings.Replace(string(topo), "name: nodeport", "name: "+name, 1)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netns.Delete(name) })
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
	if err := lab.DeletePods(context.Background(), []string{"db-1"}, opts, netns.DeleteOptions{GracePeriod: 1}); err != nil {
		t.Fatal(err)
	}
	objs, _, _ = lab.Store.ReadObjects()
	if p := objs.Pod("db-1"); p == nil || p.DeletionTimestamp != nil || podRow(t, lab, "db-1").Status != labstore.StateRunning {
		t.Errorf("db-1 after its deletion: %+v, %s; want it made again and Running", p, podRow(t, lab, "db-1").Status)
	}

	before, _ := network.Namespaces(name)
	began = time.Now()
	if err := lab.DeleteManifest(context.Background(), manifest, opts, netns.DeleteOptions{GracePeriod: -1}); err != nil {
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
	if err := lab.DeleteManifest(context.Background(), manifest, opts, netns.DeleteOptions{GracePeriod: -1}); err == nil || !strings.Contains(err.Error(), `namespaces "shop" not found`) {
		t.Errorf("a second delete -f: %v, want NotFound", err)
	}
	if err := lab.DeleteManifest(context.Background(), manifest, opts, netns.DeleteOptions{GracePeriod: -1, IgnoreNotFound: true}); err != nil {
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

// userObjects leaves out the lab's own kube-system objects (the coredns
// pod, the kube-dns Service and its slice).
func userObjects(st *labstore.State) *labstore.State {
	out := st.Clone()
	out.Pods = slices.DeleteFunc(out.Pods, func(p *corev1.Pod) bool { return p.Namespace == "kube-system" })
	out.Services = slices.DeleteFunc(out.Services, func(s *corev1.Service) bool { return s.Namespace == "kube-system" })
	out.EndpointSlices = slices.DeleteFunc(out.EndpointSlices, func(s *discoveryv1.EndpointSlice) bool { return s.Namespace == "kube-system" })
	return out
}
