package kubelet

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/agents/process"
)

func testStore(t *testing.T) *labstore.Store {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "lab")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return labstore.OpenDir(dir)
}

// A spec written is the spec read, by name and by node; a spec without a
// name, node, namespace or port is refused; a write's temporary file is
// not a spec.
func TestSpecsRoundTrip(t *testing.T) {
	store := testStore(t)
	deadline := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	a := Spec{Namespace: "default", Name: "web-a", Node: "node1", NetNS: "svclab-l.web-a", PodIPs: []string{"10.244.1.2"},
		Ports: []int{8080}, UDPPorts: []int{8081}, DelayShutdown: 3 * time.Second, Deadline: &deadline}
	b := Spec{Namespace: "default", Name: "web-b", Node: "node1", NetNS: "svclab-l.web-b", UDPPorts: []int{53}}
	for _, s := range []Spec{a, b} {
		if err := WriteSpec(store, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(store.Path("kubelet", "node1", ".tmp-123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	specs, err := (&specCache{}).read(store, "node1")
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || specs["web-a"].Deadline == nil || !specs["web-a"].Deadline.Equal(deadline) ||
		specs["web-a"].DelayShutdown != 3*time.Second || specs["web-b"].UDPPorts[0] != 53 || specs["web-a"].PodIPs[0] != "10.244.1.2" {
		t.Errorf("read back: %+v", specs)
	}
	if node, ok := SpecNode(store, "web-b"); !ok || node != "node1" {
		t.Errorf("SpecNode(web-b) = %q, %v", node, ok)
	}
	if _, ok := SpecNode(store, "web-c"); ok {
		t.Error("SpecNode found a pod with no spec")
	}
	if specs, err := (&specCache{}).read(store, "node2"); err != nil || len(specs) != 0 {
		t.Errorf("a node with no specs: %v, %v", specs, err)
	}
	if err := RemoveSpec(store, "node1", "web-a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ReadSpec(store, "node1", "web-a"); ok || err != nil {
		t.Errorf("a removed spec: %v, %v", ok, err)
	}
	for _, bad := range []Spec{
		{Node: "node1", NetNS: "n", Ports: []int{80}},
		{Name: "p", NetNS: "n", Ports: []int{80}},
		{Name: "p", Node: "node1", Ports: []int{80}},
		{Name: "p", Node: "node1", NetNS: "n"},
		{Name: "p", Node: "node1", NetNS: "n", Ports: []int{80}, Args: []string{"x"}, Log: "logs/p.log"}, // a server and a process
		{Name: "p", Node: "node1", NetNS: "n", Args: []string{"x"}},                                      // a process without a log
	} {
		if err := WriteSpec(store, bad); err == nil {
			t.Errorf("WriteSpec(%+v) took it", bad)
		}
	}
	proc := Spec{Namespace: "kube-system", Name: "kube-proxy-node1", Node: "node1", NetNS: "n", Args: []string{"/bin/svclab", "proxy"},
		Log: "logs/node1-kube-proxy.log", Backoff: process.Backoff{Initial: time.Second}}
	if err := WriteSpec(store, proc); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := ReadSpec(store, "node1", proc.Name); !ok || err != nil || !got.runsProcess() || got.Log != proc.Log || got.Backoff != proc.Backoff {
		t.Errorf("a process pod's spec read back: %+v, %v, %v", got, ok, err)
	}
	// A name that would leave the store is refused by the store.
	if err := WriteSpec(store, Spec{Name: "../../x", Node: "node1", NetNS: "n", Ports: []int{80}}); err == nil {
		t.Error("a spec path outside the store was written")
	}
}

// A kubelet for a node name the API server would refuse does not start
// (before it opens anything).
func TestRunRefusesABadNodeName(t *testing.T) {
	for _, node := range []string{"", "Node1", "../x", "node_1"} {
		if err := Run(t.Context(), testStore(t), node, io.Discard); err == nil || !strings.Contains(err.Error(), "node name") {
			t.Errorf("Run for node %q: %v, want the node name refused", node, err)
		}
	}
}

// A kubelet's sync reads again only the spec files written since its last
// one: an unchanged file (same inode, size and time) is not read, a spec
// written again is, and a removed one is gone.
func TestSpecCacheReadsOnlyChangedFiles(t *testing.T) {
	store := testStore(t)
	a := Spec{Namespace: "default", Name: "web-a", Node: "node1", NetNS: "svclab-l.web-a", Ports: []int{8080}}
	b := Spec{Namespace: "default", Name: "web-b", Node: "node1", NetNS: "svclab-l.web-b", Ports: []int{8080}}
	for _, s := range []Spec{a, b} {
		if err := WriteSpec(store, s); err != nil {
			t.Fatal(err)
		}
	}
	var c specCache
	if specs, err := c.read(store, "node1"); err != nil || len(specs) != 2 {
		t.Fatalf("first read: %v, %v", specs, err)
	}
	// Overwrite web-a's file in place with bytes that do not parse, of the
	// same size, and give it back its time: the cache must not read it.
	path := store.Path("kubelet", "node1", "web-a.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", int(fi.Size()))), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	specs, err := c.read(store, "node1")
	if err != nil || specs["web-a"].NetNS != a.NetNS {
		t.Fatalf("an unchanged file was read again: %v, %v", specs, err)
	}
	// A spec written again (a new file) is read; a removed one is gone.
	a.Ports = []int{9090}
	if err := WriteSpec(store, a); err != nil {
		t.Fatal(err)
	}
	if err := RemoveSpec(store, "node1", "web-b"); err != nil {
		t.Fatal(err)
	}
	specs, err = c.read(store, "node1")
	if err != nil || len(specs) != 1 || specs["web-a"].Ports[0] != 9090 {
		t.Fatalf("after a write and a removal: %v, %v", specs, err)
	}
}
