package labstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestConfined: `svclab delete lab --name ..` used to remove the whole
// state root, and `--name ../../X` a directory outside it. Whatever the
// name, the store writes and removes nothing outside the lab's directory.
func TestConfined(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "labs")
	t.Setenv("SVCLAB_STATE_DIR", root)
	keep := Open("keep")
	if err := keep.WriteFile("lab.yaml", []byte("x")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(parent, "X")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"..", "../..", "../X", "../../X", ".", "", "a/b", "/etc", "keep/.."} {
		s := Open(name)
		if err := s.Remove(); !errors.Is(err, ErrOutside) {
			t.Errorf("Open(%q).Remove() = %v, want ErrOutside", name, err)
		}
		if err := s.WriteFile("lab.yaml", []byte("x")); !errors.Is(err, ErrOutside) {
			t.Errorf("Open(%q).WriteFile = %v, want ErrOutside", name, err)
		}
		if _, err := s.Lock(context.Background()); !errors.Is(err, ErrOutside) {
			t.Errorf("Open(%q).Lock = %v, want ErrOutside", name, err)
		}
	}
	for _, rel := range [][]string{{".."}, {"..", "keep2"}, {"objects", "..", "..", "x"}, {""}, {"."}} {
		if err := keep.WriteFile(filepath.Join(rel...), []byte("x")); !errors.Is(err, ErrOutside) {
			t.Errorf("WriteFile(%q) = %v, want ErrOutside", filepath.Join(rel...), err)
		}
		if err := keep.RemoveFile(rel...); !errors.Is(err, ErrOutside) {
			t.Errorf("RemoveFile(%q) = %v, want ErrOutside", rel, err)
		}
	}
	if err := keep.ClearProxyStatus("../../../X"); !errors.Is(err, ErrOutside) {
		t.Errorf("ClearProxyStatus(../../../X) = %v, want ErrOutside", err)
	}
	if err := keep.WriteProxyStatus(ProxyStatus{Node: "../../x"}); !errors.Is(err, ErrOutside) {
		t.Errorf("WriteProxyStatus(../../x) = %v, want ErrOutside", err)
	}
	if !keep.Exists() {
		t.Error("the lab keep is gone")
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the directory outside the root is gone: %v", err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 2 {
		t.Errorf("files appeared beside the state root: %v", entries)
	}
	// A store opened on a directory is confined to it too.
	if err := OpenDir(filepath.Join(root, "keep")).RemoveFile("..", "..", "X"); !errors.Is(err, ErrOutside) {
		t.Errorf("OpenDir(...).RemoveFile(../../X) = %v", err)
	}
}

// TestLongObjectNames: a Deployment or ConfigMap name may have 253
// characters; its file name is shortened with a hash, and the object reads
// back whole.
func TestLongObjectNames(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("demo")
	var cms []*corev1.ConfigMap
	for _, c := range "ab" {
		name := strings.Repeat(string(c), 253)
		cms = append(cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: strings.Repeat("n", 63), Name: name}})
	}
	if _, err := s.WriteObjects(&State{ConfigMaps: cms}); err != nil {
		t.Fatal(err)
	}
	st, _, err := s.ReadObjects()
	if err != nil || len(st.ConfigMaps) != 2 || st.ConfigMap(strings.Repeat("n", 63), strings.Repeat("b", 253)) == nil {
		t.Fatalf("read back %d ConfigMaps, %v", len(st.ConfigMaps), err)
	}
	if f := objectFileName("default", "web"); f != "default.web.yaml" {
		t.Errorf("short names keep their file name: %s", f)
	}
}
