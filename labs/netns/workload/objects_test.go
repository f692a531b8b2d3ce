package workload

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/internal/labstore"
)

// seeded is the test lab with repeatable pod names.
func seeded() Cluster {
	c := lab
	c.Rand = rand.New(rand.NewPCG(1, 2))
	return c
}

func applyWith(t *testing.T, c Cluster, st *labstore.State, manifest string) *labstore.State {
	t.Helper()
	m, err := Decode([]byte(manifest), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	next, err := c.Apply(st, m, "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func readServicenet(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../../clusters/workloads/servicenet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestServiceNetworkingObjectsGolden applies the shipped Service-networking
// manifest (Namespace, StatefulSet and headless Service, DaemonSet,
// selector-less Service and its hand-written EndpointSlice) and compares
// the whole resulting state with testdata/servicenet.golden.
func TestServiceNetworkingObjectsGolden(t *testing.T) {
	st := applyWith(t, seeded(), &labstore.State{}, readServicenet(t))
	got, err := yaml.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "servicenet.golden", got)
}

// TestServiceNetworkingObjects states what the golden file shows.
func TestServiceNetworkingObjects(t *testing.T) {
	st := applyWith(t, lab, &labstore.State{}, readServicenet(t))
	if !st.NamespaceExists("shop") || !st.NamespaceExists("kube-node-lease") {
		t.Errorf("namespaces: %v", st.Namespaces)
	}
	for i, name := range []string{"db-0", "db-1"} {
		p := st.Pod(name)
		if p == nil {
			t.Fatalf("no StatefulSet pod %s", name)
		}
		if p.Spec.Hostname != name || p.Spec.Subdomain != "db" || p.Labels["statefulset.kubernetes.io/pod-name"] != name || p.Labels["apps.kubernetes.io/pod-index"] != string(rune('0'+i)) {
			t.Errorf("pod %s: hostname %q subdomain %q labels %v", name, p.Spec.Hostname, p.Spec.Subdomain, p.Labels)
		}
	}
	agents := map[string]int{}
	for _, p := range st.Pods {
		if ownedBy(p, "DaemonSet", "shop", "agent") {
			agents[p.Spec.NodeName]++
		}
	}
	if agents["hosta"] != 1 || agents["hostb"] != 1 {
		t.Errorf("DaemonSet pods per node %v, want one on each", agents)
	}
	if svc := st.Service("shop", "db"); svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("headless Service got cluster IP %s", svc.Spec.ClusterIP)
	}
	slices := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range st.EndpointSlices {
		slices[s.Labels[discoveryv1.LabelServiceName]] = append(slices[s.Labels[discoveryv1.LabelServiceName]], s)
	}
	if len(slices["db"]) != 1 || len(slices["db"][0].Endpoints) != 2 || *slices["db"][0].Endpoints[0].Hostname != "db-0" {
		t.Errorf("headless Service's slices: %+v", slices["db"])
	}
	if len(slices["legacy"]) != 1 || slices["legacy"][0].Name != "legacy-1" || slices["legacy"][0].Endpoints[0].Addresses[0] != "10.100.81.200" {
		t.Errorf("selector-less Service's slices: want only the hand-written legacy-1, got %+v", slices["legacy"])
	}
	// Applying again changes nothing (the hand-written slice is kept, not duplicated).
	again := applyWith(t, lab, st, readServicenet(t))
	if len(again.EndpointSlices) != len(st.EndpointSlices) || len(again.Pods) != len(st.Pods) {
		t.Errorf("re-apply: %d slices, %d pods; was %d, %d", len(again.EndpointSlices), len(again.Pods), len(st.EndpointSlices), len(st.Pods))
	}
}

// TestEndpointConditions is upstream's endpoint conditions for a pod being
// deleted and a Service that publishes not-ready addresses.
func TestEndpointConditions(t *testing.T) {
	now := metav1Time(time.Unix(100, 0))
	cases := []struct {
		name                       string
		ready, terminating, notRdy bool
		want                       [3]bool // ready, serving, terminating
	}{
		{"running", true, false, false, [3]bool{true, true, false}},
		{"terminating, still serving", true, true, false, [3]bool{false, true, true}},
		{"terminating, publishNotReadyAddresses", true, true, true, [3]bool{true, true, true}},
		{"not ready", false, false, false, [3]bool{false, false, false}},
		{"not ready, publishNotReadyAddresses", false, false, true, [3]bool{true, false, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{}
			svc.Name = "s"
			svc.Spec.PublishNotReadyAddresses = tc.notRdy
			pod := &corev1.Pod{}
			pod.Status.PodIP = "10.0.0.2"
			status := corev1.ConditionFalse
			if tc.ready {
				status = corev1.ConditionTrue
			}
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
			if tc.terminating {
				pod.DeletionTimestamp = &now
			}
			c := endpointFor(svc, pod, []string{pod.Status.PodIP}).Conditions
			if got := [3]bool{*c.Ready, *c.Serving, *c.Terminating}; got != tc.want {
				t.Errorf("ready, serving, terminating = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestObjectErrors: objects the API server refuses, refused with its words,
// naming file, document and field; nothing of the manifest applied.
func TestObjectErrors(t *testing.T) {
	base := applyWith(t, lab, &labstore.State{}, httpserver)
	tmpl := "  template:\n    metadata: {labels: {app: a}}\n    spec: {containers: [{name: c, image: x}]}\n"
	cases := []struct{ name, manifest, want string }{
		{"namespace missing", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n",
			`document 1: ConfigMap x/c: namespaces "x" not found`},
		{"namespace created after its object", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
			`document 1: ConfigMap x/c: namespaces "x" not found`},
		{"namespace name", "apiVersion: v1\nkind: Namespace\nmetadata: {name: X_y}\n", `Namespace X_y: metadata.name: Invalid value: "X_y"`},
		{"unsupported kind", podDoc + "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\n",
			`manifest bad.yaml: document 2: apiVersion "networking.k8s.io/v1" kind "Ingress": unsupported in a lab (nothing applied`},
		{"old apiVersion", "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: d}\n", `document 1: apiVersion "extensions/v1beta1" kind "Deployment": unsupported`},
		{"statefulset selector does not match", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  selector: {matchLabels: {app: b}}\n" + tmpl,
			"StatefulSet default/s: spec.template.metadata.labels: Invalid value: {\"app\":\"a\"}: `selector` does not match template `labels`"},
		{"daemonset without selector", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n" + tmpl, "DaemonSet default/d: spec.selector: Required value"},
		{"replicaset empty selector", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\nspec:\n  selector: {}\n" + tmpl, "empty selector is invalid for replicaset"},
		{"replicaset restartPolicy", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\nspec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}\n",
			`spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`},
		{"negative replicas", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\nspec:\n  replicas: -1\n  selector: {matchLabels: {app: a}}\n" + tmpl, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		{"statefulset serviceName", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  serviceName: A_b\n  selector: {matchLabels: {app: a}}\n" + tmpl, `spec.serviceName: Invalid value: "A_b"`},
		{"headless NodePort", "apiVersion: v1\nkind: Service\nmetadata: {name: h}\nspec: {type: NodePort, clusterIP: None, ports: [{port: 80}]}\n", `spec.clusterIP: Invalid value: "None": may not be set to 'None' for NodePort services`},
		{"slice without addressType", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e}\nendpoints: []\n", "EndpointSlice default/e: addressType: Required value"},
		{"slice addressType", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e}\naddressType: IP\nendpoints: []\n", `addressType: Unsupported value: "IP"`},
		{"slice endpoint without address", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e}\naddressType: IPv4\nendpoints: [{addresses: []}]\n", "endpoints[0].addresses: Required value: must contain at least 1 address"},
		{"slice IPv6 address in an IPv4 slice", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e}\naddressType: IPv4\nendpoints: [{addresses: ['fd00::1']}]\n", `endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address`},
		{"slice loopback address", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e}\naddressType: IPv4\nendpoints: [{addresses: [127.0.0.1]}]\n", "may not be in the loopback range"},
		{"slice duplicate port names", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e}\naddressType: IPv4\nendpoints: []\nports: [{port: 80}, {port: 81}]\n", `ports[1].name: Duplicate value: ""`},
		{"slice port protocol", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e}\naddressType: IPv4\nendpoints: []\nports: [{port: 80, protocol: HTTP}]\n", `ports[0].protocol: Unsupported value: "HTTP"`},
		{"slice claims the controller", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, labels: {endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io}}\naddressType: IPv4\nendpoints: []\n", "the EndpointSlice controller's own value"},
		{"slice in a missing namespace", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: nope}\naddressType: IPv4\nendpoints: []\n", `EndpointSlice nope/e: namespaces "nope" not found`},
		{"daemonset nodeSelector pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeSelector: {disk: ssd}, containers: [{name: c, image: x}]}\n", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.manifest), "bad.yaml")
			if err == nil {
				_, err = lab.Apply(base, m, "bad.yaml")
			}
			if err == nil || !strings.Contains(err.Error(), "manifest bad.yaml") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v,\nwant it to name bad.yaml and say %q", err, tc.want)
			}
		})
	}
	if len(base.Pods) != 3 || len(base.Namespaces) != 0 {
		t.Errorf("a failed apply changed the input state")
	}
}

func TestDaemonSetHonoursNodeSelector(t *testing.T) {
	ds := func(sel string) string {
		return "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n    spec: {nodeSelector: " + sel + ", containers: [{name: c, image: x}]}\n"
	}
	cases := []struct {
		sel   string
		nodes []string
	}{
		{"{}", []string{"hosta", "hostb"}},
		{"{kubernetes.io/hostname: hostb}", []string{"hostb"}},
		{"{kubernetes.io/os: windows}", nil},
	}
	for _, tc := range cases {
		st := applyWith(t, lab, &labstore.State{}, ds(tc.sel))
		var got []string
		for _, p := range st.Pods {
			got = append(got, p.Spec.NodeName)
		}
		if strings.Join(got, ",") != strings.Join(tc.nodes, ",") {
			t.Errorf("nodeSelector %s: pods on %v, want %v", tc.sel, got, tc.nodes)
		}
	}
}

// TestStatefulSetPodComesBackUnderItsName: a deleted StatefulSet pod is
// terminating; its successor of the same name is made once it is gone, and
// gets the hostname again; a scale-down removes the highest ordinals.
func TestStatefulSetPodComesBackUnderItsName(t *testing.T) {
	st := applyWith(t, lab, &labstore.State{}, readServicenet(t))
	next, err := lab.DeletePods(st, []string{"db-1"}, DeleteOptions{GracePeriod: 5, Now: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if p := next.Pod("db-1"); p == nil || p.DeletionTimestamp == nil || *p.DeletionGracePeriodSeconds != 5 {
		t.Fatalf("db-1 not terminating: %+v", p)
	}
	for _, s := range next.EndpointSlices {
		for _, e := range s.Endpoints {
			if e.TargetRef != nil && e.TargetRef.Name == "db-1" && (*e.Conditions.Ready || !*e.Conditions.Serving || !*e.Conditions.Terminating) {
				t.Errorf("db-1's endpoint conditions %+v, want ready=false serving=true terminating=true", e.Conditions)
			}
		}
	}
	reaped := Reap(next, []string{"db-1"})
	if reaped.Pod("db-1") != nil {
		t.Fatalf("db-1 not reaped")
	}
	reaped, err = lab.Reconcile(reaped)
	if err != nil {
		t.Fatal(err)
	}
	if p := reaped.Pod("db-1"); p == nil || p.DeletionTimestamp != nil || p.Spec.Hostname != "db-1" {
		t.Errorf("db-1 not made again after the reap: %+v", p)
	}
	one := applyWith(t, lab, reaped, strings.Replace(readServicenet(t), "replicas: 2", "replicas: 1", 1))
	if one.Pod("db-1") != nil || one.Pod("db-0") == nil {
		t.Errorf("scale to 1 kept db-1 or lost db-0")
	}
}

// TestDeleteManifest is kubectl delete -f: the objects a manifest names go
// (pods terminating first), a missing one is an error unless
// IgnoreNotFound, the built-in namespaces stay, and deleting a Namespace
// deletes what is in it.
func TestDeleteManifest(t *testing.T) {
	st := applyWith(t, lab, &labstore.State{}, readServicenet(t))
	now := DeleteOptions{GracePeriod: -1, Now: time.Unix(0, 0)}
	del := func(st *labstore.State, manifest string, opts DeleteOptions) (*labstore.State, error) {
		m, err := Decode([]byte(manifest), "del.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return lab.Delete(st, m, "del.yaml", opts)
	}
	if _, err := del(st, "apiVersion: v1\nkind: Service\nmetadata: {name: nope, namespace: shop}\n", now); err == nil || !strings.Contains(err.Error(), `manifest del.yaml: document 1: Service shop/nope: services "nope" not found`) {
		t.Errorf("missing object: %v", err)
	}
	ignore := now
	ignore.IgnoreNotFound = true
	if _, err := del(st, "apiVersion: v1\nkind: Service\nmetadata: {name: nope, namespace: shop}\n", ignore); err != nil {
		t.Errorf("missing object with IgnoreNotFound: %v", err)
	}
	if _, err := del(st, "apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system}\n", now); err == nil || !strings.Contains(err.Error(), `namespaces "kube-system" is forbidden: this namespace may not be deleted`) {
		t.Errorf("deleting kube-system: %v", err)
	}
	// The StatefulSet goes; its pods terminate; the headless Service stays.
	next, err := del(st, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\n", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(next.StatefulSets) != 0 || next.Pod("db-0").DeletionTimestamp == nil || next.Service("shop", "db") == nil {
		t.Errorf("after deleting the StatefulSet: %d sets, db-0 terminating %v", len(next.StatefulSets), next.Pod("db-0").DeletionTimestamp)
	}
	// The Namespace: everything in it goes, the namespace stays
	// Terminating (no new objects) until its last pod is gone.
	gone, err := del(st, "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(gone.Services)+len(gone.StatefulSets)+len(gone.DaemonSets)+len(gone.EndpointSlices) != 0 || len(Terminating(gone)) != len(st.Pods) {
		t.Errorf("after deleting the namespace: %d services, %d slices, %d of %d pods terminating", len(gone.Services), len(gone.EndpointSlices), len(Terminating(gone)), len(st.Pods))
	}
	m, _ := Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n"), "late.yaml")
	if _, err := lab.Apply(gone, m, "late.yaml"); err == nil || !strings.Contains(err.Error(), "because it is being terminated") {
		t.Errorf("apply into a terminating namespace: %v", err)
	}
	var names []string
	for _, p := range gone.Pods {
		names = append(names, p.Name)
	}
	empty := Reap(gone, names)
	if len(empty.Pods) != 0 || empty.NamespaceExists("shop") {
		t.Errorf("after the reap: %d pods, namespace shop exists %v", len(empty.Pods), empty.NamespaceExists("shop"))
	}
}

func metav1Time(t time.Time) metav1.Time { return metav1.NewTime(t) }

// TestDeleteManifestWithItsNamespace: kubectl delete -f of a file whose
// Namespace comes first deletes the rest with it, without NotFound errors.
func TestDeleteManifestWithItsNamespace(t *testing.T) {
	st := applyWith(t, lab, &labstore.State{}, readServicenet(t))
	m, err := Decode([]byte(readServicenet(t)), "servicenet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	next, err := lab.Delete(st, m, "servicenet.yaml", DeleteOptions{GracePeriod: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(Terminating(next)) != len(st.Pods) || len(next.Services) != 0 {
		t.Errorf("%d of %d pods terminating, %d services left", len(Terminating(next)), len(st.Pods), len(next.Services))
	}
}

// TestHandWrittenSliceCannotTakeTheControllersName: a slice named like one
// the EndpointSlice controller wrote would be two objects of one name.
func TestHandWrittenSliceCannotTakeTheControllersName(t *testing.T) {
	base := applyWith(t, lab, &labstore.State{}, httpserver)
	name := base.EndpointSlices[0].Name
	m, err := Decode([]byte("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: "+name+"}\naddressType: IPv4\nendpoints: []\n"), "clash.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Apply(base, m, "clash.yaml"); err == nil || !strings.Contains(err.Error(), "metadata.name: Duplicate value: \""+name+" (the EndpointSlice controller's slice of Service httpserver)") {
		t.Errorf("error %v", err)
	}
}
