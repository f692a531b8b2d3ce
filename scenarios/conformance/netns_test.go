package conformance

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// TestConformanceOnLabs runs the conformance scenarios on svclab's netns
// labs, and checks that the host's root namespace is as it was.
// (bin/svclab-conformance.test, which `svclab conformance --kubeconfig`
// runs, registers the same specs on a cluster.)
func TestConformanceOnLabs(t *testing.T) {
	roottest.Require(t, "the scenarios build labs from network namespaces and run iptables in them")
	dir := t.TempDir()
	err := Register(Options{Setup: func(context.Context) (kit.Target, error) {
		bin, err := roottest.Binary(dir)
		if err != nil {
			return nil, err
		}
		return &netnslab.LabTarget{Binary: bin, CNI: os.Getenv("SVCLAB_CNI")}, nil
	}, Disruptive: true}) // a lab is the suite's own: the mode switch runs
	if err != nil {
		t.Fatal(err)
	}
	before := roottest.SnapshotHost()
	RegisterFailHandler(Fail)
	RunSpecs(t, "svclab conformance (netns labs)")
	if diff := before.Diff(roottest.SnapshotHost()); len(diff) > 0 {
		t.Errorf("the scenarios changed the host's root network namespace: %v", diff)
	}
}
