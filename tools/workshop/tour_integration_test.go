package workshop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/network"
)

// TestIntegrationTours runs the tours as make lab-nodeport and make lab do
// (svclab tour nodeport|single-node, from the checkout): each is its
// lesson run at once, every step's output checked, the lab deleted at the
// end. The nodeport tour runs on flannel-vxlan here (TestLessons runs its
// lesson on all three CNIs).
func TestIntegrationTours(t *testing.T) {
	roottest.Require(t, "builds the tours' labs from network namespaces")
	bin := roottest.SharedBinary(t)
	root := filepath.Dir(filepath.Dir(lessonsDir(t))) // the checkout
	for _, c := range []struct {
		args []string
		lab  string
		want []string
	}{
		{[]string{"tour", "nodeport", "--cni", "flannel-vxlan"}, "seed-004-nodeport", []string{
			"svclab tour — lesson seed-004-nodeport",
			"7 connections, 7 succeeded, 0 failed",
			"vxlan id 1 local 192.168.16.73 dev eth0",
			"master cni0",
			"src=10.100.81.180 dst=10.100.40.0 sport=3000",
			"lab seed-004-nodeport deleted",
		}},
		{[]string{"tour", "single-node"}, "seed-001-ladder", []string{
			"svclab tour — lesson seed-001-ladder",
			"--probability 0.33333333349",
			"--probability 0.50000000000",
			"lab seed-001-ladder deleted",
		}},
	} {
		t.Run(c.args[1], func(t *testing.T) {
			cmd := exec.Command(bin, c.args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "SVCLAB_WORKSHOP_DIR="+t.TempDir(), "KEEP=", "CNI=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("svclab %s: %v\n%s", strings.Join(c.args, " "), err, out)
			}
			mustContain(t, string(out), c.want...)
			if strings.Contains(string(out), "✗") {
				t.Errorf("a step's check failed:\n%s", out)
			}
			if ns, _ := network.Namespaces(c.lab); len(ns) != 0 {
				t.Errorf("the tour left namespaces: %v", ns)
			}
		})
	}
}

// TestIntegrationTourAfterAKilledTour: a tour killed half way (SIGKILL, a
// closed terminal) leaves its lab; the next tour deletes it, saying so,
// and runs; then nothing is left.
func TestIntegrationTourAfterAKilledTour(t *testing.T) {
	roottest.Require(t, "builds the tour's lab from network namespaces")
	bin := roottest.SharedBinary(t)
	root := filepath.Dir(filepath.Dir(lessonsDir(t)))
	env := append(os.Environ(), "SVCLAB_WORKSHOP_DIR="+t.TempDir(), "KEEP=", "CNI=")
	t.Cleanup(func() {
		cmd := exec.Command(bin, "workshop", "reset")
		cmd.Env = env
		cmd.Run() //nolint:errcheck // best effort: the test has failed already if anything is left
	})

	first := exec.Command(bin, "tour", "single-node")
	first.Dir, first.Env = root, env
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has shown its second step: the lab is up, the
	// workload applied.
	var seen strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "Step 2/") {
		n, err := stdout.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("the first tour ended before step 2: %v\n%s", err, seen.String())
		}
	}
	first.Process.Kill()
	first.Wait() //nolint:errcheck // killed
	if ns, _ := network.Namespaces("seed-001-ladder"); len(ns) == 0 {
		t.Fatal("the killed tour left no lab: the test did not kill it half way")
	}

	again := exec.Command(bin, "tour", "single-node")
	again.Dir, again.Env = root, env
	out, err := again.CombinedOutput()
	if err != nil {
		t.Fatalf("the tour after a killed one: %v\n%s", err, out)
	}
	mustContain(t, string(out), "an earlier tour of seed-001-ladder did not end (lab seed-001-ladder): deleting it first", "lab seed-001-ladder deleted")
	if ns, _ := network.Namespaces("seed-001-ladder"); len(ns) != 0 {
		t.Errorf("namespaces left: %v", ns)
	}
}
