package conformance

import (
	"context"
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/scenarios/kit"
)

// Options say where one run of the suite goes and with which image.
type Options struct {
	// Setup makes the target the suite runs on. The suite calls it once,
	// in BeforeSuite, and closes the target in AfterSuite (a kind cluster
	// made for the run is deleted there, its logs exported first).
	Setup func(ctx context.Context) (kit.Target, error)
	// Image is the scenario backend image: svclab's netexec (agnhost
	// netexec's /hostname, /clientip, /) with svclab's traffic client in
	// it; "" is svclab/netexec:dev (kind.NetexecImage). Clusters svclab
	// creates have it preloaded; for other clusters the runner may name
	// another reference (a registry copy).
	Image string
	// ServerImage is the image of the pods that only serve (the Services'
	// backend Deployments), "" is Image: upstream's agnhost runs there as
	// well (svclab's server takes its netexec flags and answers its
	// /hostname and /clientip). Pods the suite execs svclab's traffic
	// client or lookup in run Image.
	ServerImage string
	// PullPolicy is the image pull policy of the scenario pods: Never on
	// clusters svclab loaded the image into; "" is IfNotPresent.
	PullPolicy string
	// Disruptive also runs the specs labelled Disruptive (the mode
	// switch rewrites the proxy's ConfigMap and restarts its pods); they
	// skip, saying so, without it. Labs set it: a lab is the suite's own.
	Disruptive bool
	// Artifacts is a directory for each failed spec's evidence,
	// DIR/<spec>/{rules,conntrack,trace}.txt (evidence.go); "" is none
	// (the JUnit report has it either way).
	Artifacts string
}

// suite is one run: its options, and the target BeforeSuite made.
type suite struct {
	opts   Options
	target kit.Target
}

// Register declares the suite's specs for one run, on the target
// opts.Setup makes. Call it once per process (ginkgo runs one suite per
// process), before ginkgo.RunSpecs.
func Register(opts Options) error {
	if opts.Setup == nil {
		return errors.New("conformance.Options.Setup is not set: the runner says which backend the suite runs on")
	}
	if opts.Image == "" {
		opts.Image = kind.NetexecImage
	}
	if opts.ServerImage == "" {
		opts.ServerImage = opts.Image
	}
	if opts.PullPolicy == "" {
		opts.PullPolicy = "IfNotPresent"
	}
	s := &suite{opts: opts}
	BeforeSuite(func(ctx SpecContext) {
		t, err := s.opts.Setup(ctx)
		if err != nil {
			Fail("set-up: " + err.Error()) // one readable line in the JUnit
		}
		s.target = t
		DeferCleanup(func(ctx SpecContext) {
			Expect(s.target.Close(ctx)).To(Succeed())
		})
	})
	// A spec's own requirement labels (SkipReason); its containers' are
	// checked before their workspace is made (workspace).
	BeforeEach(func(ctx SpecContext) { s.skipUnmet(ctx, CurrentSpecReport().LeafNodeLabels) })
	// In the order the files declared them at init before.
	s.modeSwitchSpecs()
	s.nodePortSpecs()
	s.splitSpecs()
	s.ladderSpecs()
	s.serviceSpecsUDP()
	s.serviceSpecsMore()
	return nil
}

// workspace makes a workspace for one Ordered container in its
// BeforeAll and deletes it after the container, also when a spec fails.
// A target that does not meet the container's requirement labels
// (SkipReason), or has fewer nodes than needed, skips the container
// before anything is made.
func (s *suite) workspace(prefix string, nodes int, manifests func(ctx context.Context, ws kit.Workspace) string) *kit.Workspace {
	ws := new(kit.Workspace)
	BeforeAll(func(ctx SpecContext) {
		s.skipUnmet(ctx, containerLabels())
		w, err := s.target.Workspace(ctx, prefix, nodes)
		if err == kit.ErrTooFewNodes {
			Skip(fmt.Sprintf("%s: needs %d nodes the scenarios can use: %v", s.target.Backend(), nodes, err))
		}
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { Expect(w.Delete(ctx)).To(Succeed()) })
		*ws = w
		Expect(w.Apply(ctx, manifests(ctx, w))).To(Succeed())
	})
	return ws
}
