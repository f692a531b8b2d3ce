package labstore

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/golden"
)

// everyKind is a State with one object of each kind the store keeps (and
// a ConfigMap whose name is too long for a plain file name).
func everyKind() *State {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: map[string]string{"app": "web"}}
	}
	replicas := int32(2)
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	port := int32(8080)
	return &State{
		Namespaces:   []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}},
		Deployments:  []*appsv1.Deployment{{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: selector}}},
		ReplicaSets:  []*appsv1.ReplicaSet{{ObjectMeta: meta("web-5d8f"), Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: selector}}},
		StatefulSets: []*appsv1.StatefulSet{{ObjectMeta: meta("db"), Spec: appsv1.StatefulSetSpec{ServiceName: "db", Selector: selector}}},
		DaemonSets:   []*appsv1.DaemonSet{{ObjectMeta: meta("agent"), Spec: appsv1.DaemonSetSpec{Selector: selector}}},
		Pods: []*corev1.Pod{{ObjectMeta: meta("web-5d8f-abcde"), Spec: corev1.PodSpec{NodeName: "node1"},
			Status: corev1.PodStatus{PodIP: "10.244.1.5"}}},
		Services: []*corev1.Service{{ObjectMeta: meta("web"), Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10",
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}},
		ConfigMaps: []*corev1.ConfigMap{
			{ObjectMeta: meta("settings"), Data: map[string]string{"a": "1"}},
			{ObjectMeta: meta(strings.Repeat("long-", 50)), Data: map[string]string{"b": "2"}},
		},
		EndpointSlices: []*discoveryv1.EndpointSlice{{ObjectMeta: meta("web-x1"), AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.5"}}},
			Ports:     []discoveryv1.EndpointPort{{Port: &port}}}},
	}
}

// TestWriteObjectsFiles: the files WriteObjects makes, byte for byte
// (testdata/objects.golden): their names, their JSON (encoding.go) with apiVersion and
// kind, and the generation.
func TestWriteObjectsFiles(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("files")
	if _, err := s.WriteObjects(everyKind()); err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	root := s.Path("objects")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		dump.WriteString("== " + rel + "\n")
		dump.Write(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "objects.golden", dump.Bytes())
}

// TestWriteObjectsLeavesTheCallersObjects: WriteObjects writes apiVersion
// and kind into the files, not into the objects it is given (neither an
// empty TypeMeta nor a wrong one changes).
func TestWriteObjectsLeavesTheCallersObjects(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("unchanged")
	in := everyKind()
	in.Services[0].TypeMeta = metav1.TypeMeta{APIVersion: "example/v9", Kind: "NotAService"}
	before := in.Clone()
	if _, err := s.WriteObjects(in); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, before) {
		t.Errorf("WriteObjects changed its input:\n%s", golden.LineDiff(dumpYAML(t, before), dumpYAML(t, in)))
	}
	if in.Pods[0].Kind != "" || in.Namespaces[0].APIVersion != "" {
		t.Errorf("the pod's TypeMeta became %+v, the namespace's %+v", in.Pods[0].TypeMeta, in.Namespaces[0].TypeMeta)
	}
	st, _, err := s.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Service("shop", "web"); got == nil || got.APIVersion != "v1" || got.Kind != "Service" {
		t.Errorf("the stored Service reads back as %+v; want apiVersion v1, kind Service", got)
	}
}

// dumpYAML is a State as YAML, for a failure's diff.
func dumpYAML(t *testing.T, st *State) string {
	t.Helper()
	data, err := yaml.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
