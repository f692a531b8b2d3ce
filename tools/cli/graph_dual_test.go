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

// TestGraphCommandDualStack: `svclab graph` of a dual-stack lab's store
// (clusters/dual-stack.yaml, a pod with status.podIPs of both families)
// draws, in every format, the nodes' IPv6 addresses, the IPv6 VXLAN
// device and the pod's two addresses.
func TestGraphCommandDualStack(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	data, err := os.ReadFile(filepath.Join("..", "..", "clusters", "dual-stack.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	st := labstore.Open("dual-stack")
	if err := os.MkdirAll(st.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.Path("lab.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-a", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "node1"},
		Status: corev1.PodStatus{PodIP: "10.244.1.3",
			PodIPs: []corev1.PodIP{{IP: "10.244.1.3"}, {IP: "fd00:10:244:1::3"}}},
	}
	if _, err := st.WriteObjects(&labstore.State{Pods: []*corev1.Pod{pod}}); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"svg", "dot", "mermaid"} {
		out, err := run("graph", "--lab", "dual-stack", "-o", format)
		if err != nil {
			t.Fatalf("graph -o %s: %v\n%s", format, err, out)
		}
		for _, want := range []string{"fd00::c0a8:1049/116", "fd00::c0a8:104a/116", "vxlan-v6.calico", "web-a", "10.244.1.3/32", "fd00:10:244:1::3/128"} {
			if !strings.Contains(out, want) {
				t.Errorf("graph -o %s does not show %s", format, want)
			}
		}
	}
}
