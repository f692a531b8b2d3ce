package labstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/roottest"
)

// traversableStateRoot points SVCLAB_STATE_DIR below a root-owned 0755
// directory, as /run is: the attacker may enter it, and the modes svclab
// gives what it makes below decide the rest.
func traversableStateRoot(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "svclab-labstore-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "labs")
	t.Setenv("SVCLAB_STATE_DIR", root)
	return root
}

// nobodyCannotRead fails the test when nobody can read one of the files.
func nobodyCannotRead(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s: %v (the test should read a file that exists)", f, err)
		}
		out, err := roottest.AsNobody(t, exec.Command("cat", f)).CombinedOutput()
		if err == nil {
			t.Errorf("nobody read %s:\n%s", f, out)
		} else if !strings.Contains(string(out), "Permission denied") {
			t.Errorf("nobody's cat %s: %v %s, want Permission denied", f, err, out)
		}
	}
}

// TestAttackerCannotReadALabsState plays finding 4 of the hardening issue:
// a local user reads a lab's ConfigMaps, its last trace, its journal and
// its pods' states from the state directory. Every file the store writes
// is root's alone.
func TestAttackerCannotReadALabsState(t *testing.T) {
	roottest.Require(t, "acts as the user nobody against root's lab state")
	root := traversableStateRoot(t)
	s := Open("demo")
	if err := s.WriteFile("lab.yaml", []byte("kind: Lab\n")); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "secret-ish"}, Data: map[string]string{"password": "hunter2"}}
	if _, err := s.WriteObjects(&State{ConfigMaps: []*corev1.ConfigMap{cm}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteLastTrace([]byte(`{"trace":1}`), []byte("<svg/>")); err != nil {
		t.Fatal(err)
	}
	if err := s.WritePodStatus(PodStatus{Namespace: "default", Name: "web-0"}); err != nil {
		t.Fatal(err)
	}
	nobodyCannotRead(t,
		s.Path("objects", kindConfigMaps, ObjectFileName("default", "secret-ish")),
		s.Path(LastTraceJSON), s.Path(LastTraceSVG), s.Path("lab.yaml"), s.Path(podStatusFile("web-0")))
	if out, err := roottest.AsNobody(t, exec.Command("ls", root)).CombinedOutput(); err == nil {
		t.Errorf("nobody listed the labs in %s: %s", root, out)
	}
	for _, f := range []string{s.Path("lab.yaml"), s.Path("objects", kindConfigMaps, ObjectFileName("default", "secret-ish"))} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", f, fi.Mode())
		}
	}
}

// TestOpenTightensAnOlderLabsState: a lab an older svclab left
// world-readable (0755 directories, 0644 files) becomes root's alone when
// it is opened.
func TestOpenTightensAnOlderLabsState(t *testing.T) {
	roottest.Require(t, "acts as the user nobody against root's lab state")
	root := traversableStateRoot(t)
	dir := filepath.Join(root, "old")
	cmFile := filepath.Join(dir, "objects", kindConfigMaps, "default.cm.yaml")
	if err := os.MkdirAll(filepath.Dir(cmFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dir, "lab.yaml"), cmFile} {
		if err := os.WriteFile(f, []byte("data: {password: hunter2}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := roottest.AsNobody(t, exec.Command("cat", cmFile)).CombinedOutput(); err != nil {
		t.Fatalf("the older lab's layout is not world-readable to begin with: %v %s", err, out)
	}
	Open("old")
	nobodyCannotRead(t, cmFile, filepath.Join(dir, "lab.yaml"))
}
