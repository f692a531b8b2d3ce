package kubeprint

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/svclab/svclab/internal/golden"
)

// template is a pod template of the given containers (name=image pairs).
func template(app string, containers ...string) corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}}
	for i := 0; i+1 < len(containers); i += 2 {
		t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: containers[i], Image: containers[i+1]})
	}
	return t
}

func selector(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

func meta(ns, name string, created time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: ago(created), Labels: map[string]string{"app": name}}
}

// deployments: one all ready, one rolling (an old pod, a new one not yet
// ready) with two containers and a selector expression, one of zero
// replicas created by an old store (no creationTimestamp).
func deployments() []runtime.Object {
	tm := metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	rolling := &appsv1.Deployment{TypeMeta: tm, ObjectMeta: meta("default", "api", 2*time.Hour),
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: template("api", "api", "svclab/echo:1", "sidecar", "busybox"),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}},
		Status: appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}}
	return []runtime.Object{
		rolling,
		&appsv1.Deployment{TypeMeta: tm, ObjectMeta: meta("default", "web", 90*time.Second),
			Spec:   appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Template: template("web", "web", "nginx"), Selector: selector("web")},
			Status: appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}},
		&appsv1.Deployment{TypeMeta: tm, ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "idle"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Template: template("idle", "idle", "pause"), Selector: selector("idle")}},
	}
}

func replicaSets() []runtime.Object {
	tm := metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"}
	return []runtime.Object{
		&appsv1.ReplicaSet{TypeMeta: tm, ObjectMeta: meta("default", "cache", 5*time.Minute),
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Template: template("cache", "redis", "redis:7"), Selector: selector("cache")},
			Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1, AvailableReplicas: 1}},
		&appsv1.ReplicaSet{TypeMeta: tm, ObjectMeta: meta("default", "empty", 26*time.Hour),
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Template: template("empty", "x", "x"), Selector: selector("empty")}},
	}
}

func statefulSets() []runtime.Object {
	tm := metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	return []runtime.Object{
		&appsv1.StatefulSet{TypeMeta: tm, ObjectMeta: meta("default", "db", 3*24*time.Hour),
			Spec:   appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: "db", Template: template("db", "db", "postgres:16"), Selector: selector("db")},
			Status: appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2, CurrentReplicas: 3, UpdatedReplicas: 3, AvailableReplicas: 2}},
		&appsv1.StatefulSet{TypeMeta: tm, ObjectMeta: meta("default", "zk", 40*time.Second),
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), ServiceName: "zk", Template: template("zk", "zk", "zookeeper", "metrics", "exporter"), Selector: selector("zk")}},
	}
}

func daemonSets() []runtime.Object {
	tm := metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}
	agent := template("agent", "agent", "svclab/agent:2")
	ssd := template("ssd", "probe", "busybox")
	ssd.Spec.NodeSelector = map[string]string{"disk": "ssd", corev1.LabelOSStable: "linux"}
	return []runtime.Object{
		&appsv1.DaemonSet{TypeMeta: tm, ObjectMeta: meta("kube-system", "agent", 10*time.Minute),
			Spec: appsv1.DaemonSetSpec{Template: agent, Selector: selector("agent")},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2,
				UpdatedNumberScheduled: 3, NumberAvailable: 2}},
		&appsv1.DaemonSet{TypeMeta: tm, ObjectMeta: meta("default", "ssd", 7*time.Hour),
			Spec: appsv1.DaemonSetSpec{Template: ssd, Selector: selector("ssd")}},
	}
}

// TestPrintAppsTables compares the apps/v1 kinds' tables (plain, wide,
// -A) and their -o json with goldens.
func TestPrintAppsTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		objs []runtime.Object
		opts Options
	}{
		{"deployments", deployments()[:2], Options{}},
		{"deployments-wide-all-namespaces", deployments(), Options{Output: OutputWide, WithNamespace: true}},
		{"deployments-list.json", deployments()[1:2], Options{Output: OutputJSON}},
		{"replicasets", replicaSets(), Options{}},
		{"replicasets-wide", replicaSets(), Options{Output: OutputWide}},
		{"replicaset.json", replicaSets()[:1], Options{Output: OutputJSON, Single: true}},
		{"statefulsets", statefulSets(), Options{}},
		{"statefulsets-wide", statefulSets(), Options{Output: OutputWide}},
		{"statefulsets-list.json", statefulSets()[:1], Options{Output: OutputJSON}},
		{"daemonsets", daemonSets()[1:], Options{}},
		{"daemonsets-wide-all-namespaces", daemonSets(), Options{Output: OutputWide, WithNamespace: true}},
		{"daemonsets-list.json", daemonSets()[:1], Options{Output: OutputJSON}},
		{"apps-names", []runtime.Object{deployments()[0], replicaSets()[0], statefulSets()[0], daemonSets()[0]}, Options{Output: OutputName}},
	} {
		t.Run(tc.name, func(t *testing.T) { golden.Check(t, tc.name+".golden", render(t, tc.objs, tc.opts)) })
	}
}
