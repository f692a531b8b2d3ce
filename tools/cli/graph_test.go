package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// fakeLabStore makes a lab's state directory under a temporary state root
// (no namespaces: graph reads only the store): clusters/nodeport.yaml with
// one pod on each node.
func fakeLabStore(t *testing.T) *labstore.Store {
	t.Helper()
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	data, err := os.ReadFile(filepath.Join("..", "..", "clusters", "nodeport.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	st := labstore.Open("nodeport")
	if err := os.MkdirAll(st.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.Path("lab.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	pod := func(name, node, ip string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       corev1.PodSpec{NodeName: node},
			Status:     corev1.PodStatus{PodIP: ip},
		}
	}
	objs := &labstore.State{Pods: []*corev1.Pod{pod("web-1", "hosta", "10.100.40.2"), pod("web-2", "hostb", "10.100.81.2"), pod("pending", "", "")}}
	if _, err := st.WriteObjects(objs); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestGraphCommand(t *testing.T) {
	st := fakeLabStore(t)
	before, _ := os.ReadDir(st.Dir)
	for format, want := range map[string]string{
		"svg":     `<svg xmlns="http://www.w3.org/2000/svg"`,
		"dot":     `graph "nodeport" {`,
		"mermaid": "flowchart TB",
	} {
		// --lab always: labs that other packages' tests run at the same
		// time are visible too (the lab list also reads the host's netns).
		out, err := run("graph", "--lab", "nodeport", "-o", format)
		if err != nil {
			t.Fatalf("graph -o %s: %v\n%s", format, err, out)
		}
		for _, w := range []string{want, "hosta", "hostb", "client", "router", "web-1", "web-2", "10.100.81.2"} {
			if !strings.Contains(out, w) {
				t.Errorf("graph -o %s lacks %q", format, w)
			}
		}
		if strings.Contains(out, "pending") {
			t.Errorf("graph -o %s draws a pod with no node", format)
		}
	}
	if out, err := run("graph", "--lab", "nodeport"); err != nil || !strings.HasPrefix(out, "<?xml") {
		t.Errorf("graph --lab nodeport (default -o svg): %v, %.40q", err, out)
	}
	after, _ := os.ReadDir(st.Dir)
	if len(after) != len(before) {
		t.Errorf("graph changed the lab's directory: %d entries, then %d", len(before), len(after))
	}

	_, err := run("graph", "-o", "png")
	if err == nil || err.Error() != `-o: unknown output format "png" (one of: svg, dot, mermaid)` {
		t.Errorf("graph -o png: %v", err)
	}
	if _, err := run("graph", "--lab", "other"); err == nil || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("graph --lab other: %v, want an error naming the lab", err)
	}
	if got := complete(t, "graph", "-o", ""); strings.Join(got, ",") != "svg,dot,mermaid" {
		t.Errorf("__complete graph -o '': %v", got)
	}
}
