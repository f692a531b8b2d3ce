package conformance

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

// TestConformanceOnLabs runs the conformance scenarios on svclab's netns
// labs, and checks that the host's root namespace is as it was.
// (bin/svclab-conformance.test, which `svclab conformance --kubeconfig`
// runs, registers the same specs on a cluster.) $SVCLAB_CNI picks the
// labs' CNI, $SVCLAB_IP_FAMILY their spec.ipFamily (dual: the specs run in
// both families, and the dual-stack ones too).
func TestConformanceOnLabs(t *testing.T) {
	roottest.Require(t, "the scenarios build labs from network namespaces and run iptables in them")
	dir := t.TempDir()
	labs := &netnslab.LabTarget{CNI: os.Getenv("SVCLAB_CNI"), IPFamily: topology.IPFamily(os.Getenv("SVCLAB_IP_FAMILY"))}
	families, err := labs.Families(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if labs.IPFamily == "" {
		families = nil // the labs as they always were: the specs untagged
	}
	err = Register(Options{Setup: func(context.Context) (kit.Target, error) {
		bin, err := roottest.Binary(dir)
		if err != nil {
			return nil, err
		}
		labs.Binary = bin
		return labs, nil
	}, Disruptive: true, Families: families}) // a lab is the suite's own: the mode switch runs
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
