package labsize

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
)

// A run builds a real lab of the size asked, measures every phase, counts
// the lab's processes (per node its kubelet, the kubelet's supervisor and
// the proxy; the cluster DNS pod and its supervisor), and deletes the lab,
// leaving no namespace behind.
func TestIntegrationRunMeasuresALab(t *testing.T) {
	roottest.Require(t, "builds a lab of network namespaces")
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	res, err := Run(t.Context(), Options{
		Nodes: []int{2}, PodsPerNode: 2, Timeout: 3 * time.Minute, MemoryFloor: 1 << 30,
		Lab: netns.Options{Binary: roottest.SharedBinary(t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Failed(res); err != nil {
		t.Fatal(err)
	}
	s := res.Sizes[0]
	if s.Nodes != 2 || s.Pods != 4 || s.CreateMs <= 0 || s.PodsMs <= 0 || s.BringUpMs != s.CreateMs+s.PodsMs ||
		s.PodsStartMs <= 0 || s.ChangeServiceMs <= 0 || s.DeleteMs <= 0 || s.PerPodMs <= 0 {
		t.Errorf("the size's times: %+v", s)
	}
	if s.Footprint.Processes != 2*3+2 || s.Footprint.PSSBytes <= 0 {
		t.Errorf("footprint %+v, want 8 processes (per node the kubelet, its supervisor and the proxy; the DNS pod and its supervisor) and their PSS", s.Footprint)
	}
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "svclab-lsbench-") {
			t.Errorf("namespace %s left after the run", e.Name())
		}
	}
}
