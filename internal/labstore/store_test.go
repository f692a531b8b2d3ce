package labstore

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWriteObjectsRoundTripAndGeneration(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("demo")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.11"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy"}, Data: map[string]string{"config.conf": "mode: \"\"\n"}}
	gen, err := s.WriteObjects(&State{Services: []*corev1.Service{svc}, ConfigMaps: []*corev1.ConfigMap{cm}})
	if err != nil || gen != 1 {
		t.Fatalf("first write: generation %d, %v", gen, err)
	}
	st, readGen, err := s.ReadObjects()
	if err != nil || readGen != 1 {
		t.Fatalf("read: generation %d, %v", readGen, err)
	}
	if got := st.Service("default", "web"); got == nil || got.Spec.ClusterIP != "10.96.0.11" || got.Kind != "Service" {
		t.Errorf("service read back as %+v", got)
	}
	if got := st.ConfigMap("kube-system", "kube-proxy"); got == nil || got.Data["config.conf"] != "mode: \"\"\n" {
		t.Errorf("configmap read back as %+v", got)
	}
	// The same objects again: nothing changes, the generation stays.
	if gen, _ := s.WriteObjects(st); gen != 1 {
		t.Errorf("rewriting the same objects bumped the generation to %d", gen)
	}
	// Removing the Service removes its file and bumps the generation.
	gen, err = s.WriteObjects(&State{ConfigMaps: st.ConfigMaps})
	if err != nil || gen != 2 {
		t.Fatalf("second write: generation %d, %v", gen, err)
	}
	if _, err := os.Stat(s.Path("objects", "services", "default.web.yaml")); !os.IsNotExist(err) {
		t.Errorf("the removed Service's file is still there: %v", err)
	}
	// No temporary files are left behind by atomic writes.
	filepath.Walk(s.Dir, func(path string, info os.FileInfo, _ error) error {
		if info != nil && !info.IsDir() && filepath.Base(path)[0] == '.' {
			t.Errorf("left-over temporary file %s", path)
		}
		return nil
	})
}

func TestProxyStatus(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("demo")
	if err := s.WriteProxyStatus(ProxyStatus{Node: "node1", Generation: 3, Healthy: true, Mode: "iptables"}); err != nil {
		t.Fatal(err)
	}
	all, err := s.ProxyStatuses()
	if err != nil || all["node1"].Generation != 3 || !all["node1"].Healthy {
		t.Fatalf("statuses %+v, %v", all, err)
	}
	if err := s.ClearProxyStatus("node1"); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearProxyStatus("node1"); err != nil {
		t.Errorf("clearing twice: %v", err)
	}
	if all, _ := s.ProxyStatuses(); len(all) != 0 {
		t.Errorf("after clear: %+v", all)
	}
}

func TestListAndRemove(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	if names, err := List(); err != nil || len(names) != 0 {
		t.Fatalf("empty root: %v %v", names, err)
	}
	s := Open("a")
	if err := s.WriteFile("lab.yaml", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if !s.Exists() {
		t.Errorf("lab a should exist")
	}
	if names, _ := List(); len(names) != 1 || names[0] != "a" {
		t.Errorf("List = %v", names)
	}
	if err := s.Remove(); err != nil || s.Exists() {
		t.Errorf("Remove: %v, exists %v", err, s.Exists())
	}
}
