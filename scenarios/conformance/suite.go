package conformance

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/scenarios/kit"
)

// Setup makes the target the suite runs on. The runner sets it before
// RunSpecs; the suite calls it once, in BeforeSuite, and closes the
// target in AfterSuite (a kind cluster made for the run is deleted
// there, its logs exported first).
var Setup func(ctx context.Context) (kit.Target, error)

// target is the suite's Target, set in BeforeSuite.
var target kit.Target

var _ = BeforeSuite(func(ctx SpecContext) {
	Expect(Setup).NotTo(BeNil(), "conformance.Setup is not set: the runner says which backend the suite runs on")
	t, err := Setup(ctx)
	Expect(err).NotTo(HaveOccurred())
	target = t
	DeferCleanup(func(ctx SpecContext) {
		Expect(target.Close(ctx)).To(Succeed())
	})
})

// workspace makes a workspace for one Ordered container in its
// BeforeAll and deletes it after the container, also when a spec fails.
// A target with fewer nodes than needed skips the container.
func workspace(prefix string, nodes int, manifests func(ctx context.Context, ws kit.Workspace) string) *kit.Workspace {
	ws := new(kit.Workspace)
	BeforeAll(func(ctx SpecContext) {
		w, err := target.Workspace(ctx, prefix, nodes)
		if err == kit.ErrTooFewNodes {
			Skip(target.Backend() + ": " + err.Error())
		}
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { Expect(w.Delete(ctx)).To(Succeed()) })
		*ws = w
		Expect(w.Apply(ctx, manifests(ctx, w))).To(Succeed())
	})
	return ws
}
