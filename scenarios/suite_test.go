package scenarios

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/internal/roottest"
)

// binary is the svclab executable the scenarios' labs run.
var binary string

func TestScenarios(t *testing.T) {
	roottest.Require(t, "the scenarios build labs from network namespaces and run iptables in them")
	RegisterFailHandler(Fail)
	RunSpecs(t, "svclab scenarios")
}

// hostBefore is the host's root namespace before the suite: the suite ends by
// checking that no scenario changed it.
var hostBefore roottest.HostSnapshot

var _ = BeforeSuite(func() {
	hostBefore = roottest.SnapshotHost()
	dir, err := os.MkdirTemp("", "svclab-bin-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	binary, err = roottest.Binary(dir)
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	Expect(hostBefore.Diff(roottest.SnapshotHost())).To(BeEmpty(),
		"the scenarios changed the host's root network namespace (links, addresses, routes or iptables rules)")
})
