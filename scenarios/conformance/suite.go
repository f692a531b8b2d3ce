package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

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
	// Families are the IP families the specs run in, the cluster's
	// primary one first (nil is IPv4 alone, as a single-stack IPv4 cluster
	// has): the specs are declared once per family, each run's Services
	// single-stack of its family, its evidence that family's, its names
	// tagged "[IPv6]" (a single-stack IPv4 run's names are as they always
	// were); with both, the dual-stack specs too. The set-up fails when
	// the target lacks one of them. The runner finds them before the specs
	// are declared (kube.ClusterFamilies, the way upstream's e2e does) or
	// takes them from --ip-family.
	Families []corev1.IPFamily
	// Artifacts is a directory for each failed spec's evidence,
	// DIR/<spec>/{rules,conntrack,trace}.txt (evidence.go); "" is none
	// (the JUnit report has it either way).
	Artifacts string
}

// suite is one run: its options, and the target BeforeSuite made.
type suite struct {
	opts   Options
	target kit.Target
	// runs are the declarations of the specs, one per family (families.go).
	runs []familyRun
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
	s := &suite{opts: opts, runs: familyRuns(opts.Families)}
	BeforeSuite(func(ctx SpecContext) {
		t, err := s.opts.Setup(ctx)
		if err != nil {
			Fail("set-up: " + err.Error()) // one readable line in the JUnit
		}
		s.target = t
		DeferCleanup(func(ctx SpecContext) {
			Expect(s.target.Close(ctx)).To(Succeed())
		})
		if err := s.checkFamilies(ctx); err != nil {
			Fail("set-up: " + err.Error())
		}
	})
	// A spec's own requirement labels (SkipReason); its containers' are
	// checked before their workspace is made (workspace).
	BeforeEach(func(ctx SpecContext) { s.skipUnmet(ctx, CurrentSpecReport().LeafNodeLabels) })
	// In the order the files declared them at init before, once per
	// family; the mode switch once, in the primary family (it switches
	// the proxy of every family).
	s.modeSwitchSpecs(s.runs[0])
	for _, f := range s.runs {
		s.nodePortSpecs(f)
		s.splitSpecs(f)
		s.ladderSpecs(f)
		s.serviceSpecsUDP(f)
		s.serviceSpecsMore(f)
	}
	if len(s.runs) > 1 {
		s.dualStackSpecs(s.runs[0]) // dualstack.go
	}
	return nil
}

// workspace makes a workspace for one Ordered container in its
// BeforeAll and deletes it after the container, also when a spec fails.
// A target that does not meet the container's requirement labels
// (SkipReason), or has fewer nodes than needed, skips the container
// before anything is made.
func (s *suite) workspace(f familyRun, prefix string, nodes int, manifests func(ctx context.Context, ws kit.Workspace) string) *kit.Workspace {
	ws := new(kit.Workspace)
	BeforeAll(func(ctx SpecContext) {
		s.skipUnmet(ctx, containerLabels())
		w, err := s.target.Workspace(ctx, prefix, nodes, f.family)
		if err == kit.ErrTooFewNodes {
			Skip(fmt.Sprintf("%s: needs %d nodes the scenarios can use: %v", s.target.Backend(), nodes, err))
		}
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { Expect(w.Delete(ctx)).To(Succeed()) })
		*ws = w
		m, err := f.manifests(manifests(ctx, w))
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Apply(ctx, m)).To(Succeed())
	})
	return ws
}

// checkFamilies says which of Options.Families the target lacks (nil
// when it has them all).
func (s *suite) checkFamilies(ctx context.Context) error {
	if len(s.opts.Families) == 0 {
		return nil
	}
	has, err := s.target.Families(ctx)
	if err != nil {
		return fmt.Errorf("the target's IP families: %w", err)
	}
	for _, f := range s.opts.Families {
		if !slices.Contains(has, f) {
			return fmt.Errorf("the specs run in %v, and the %s target has no %s (its families: %v)", s.opts.Families, s.target.Backend(), f, has)
		}
	}
	return nil
}
