package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"

	"github.com/svclab/svclab/internal/kubeconfig"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/e2eprovider"
	"github.com/svclab/svclab/scenarios/conformance"
	"github.com/svclab/svclab/scenarios/conformance/cmdline"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/kube"
)

// flags are the binary's command line (package cmdline), parsed by the
// testing package with ginkgo's.
var flags = cmdline.Register(flag.CommandLine)

// TestConformance runs the conformance scenarios where the flags say: on
// the cluster of -kubeconfig, on the one it runs in (-in-cluster), or on
// a kind cluster made from -kind-config. ginkgo runs one suite per
// process, so one cluster per run.
func TestConformance(t *testing.T) {
	if err := flags.Check(); err != nil {
		t.Fatal(err)
	}
	if flags.Cleanup {
		cleanup(t, *flags)
		return
	}
	if preflight(t, *flags) { // dryrun_test.go: --label-filter/--focus checked; --dry-run done
		return
	}
	switch {
	case flags.Kubeconfig != "", flags.InCluster:
		onCluster(t, *flags)
	case flags.KindConfig != "":
		onKind(t, *flags)
	default:
		t.Skip("no -kubeconfig, -in-cluster or -kind-config: say which cluster the conformance suite runs on (`svclab conformance --kubeconfig FILE`, `make e2e-kind`)")
	}
}

// onCluster runs the suite on a cluster that exists: the kubeconfig's,
// or the one this process runs in (-in-cluster: a Job's pod, with its
// service account). Everything that can fail before the specs — the
// config, the image reference, reaching the cluster, the sweep of what
// earlier runs left, the node agent — happens in the suite's set-up
// (BeforeSuite), so that a failure there is a failed testcase of the
// JUnit report, with its reason, and the report is always written.
func onCluster(t *testing.T, f cmdline.Flags) {
	where := "the cluster of " + f.Kubeconfig
	if f.InCluster {
		where = "the cluster it runs in"
	}
	// The families decide which specs are declared, so they are found
	// first; when that fails, the set-up fails (a failed testcase of the
	// JUnit report): with the target's own reason when it cannot be made
	// either (the cluster does not answer), else with this one.
	families, familiesErr := clusterFamilies(t.Context(), f)
	setup := func(ctx context.Context) (kit.Target, error) {
		target, err := clusterTarget(ctx, f)
		if err != nil || familiesErr == nil {
			return target, err
		}
		target.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("the cluster's IP families: %w", familiesErr)
	}
	run(t, "svclab conformance on "+where, conformance.Options{
		Setup: setup, Families: families,
		Image: f.Image, ServerImage: f.ServerImage, PullPolicy: f.PullPolicy,
	})
}

// cleanup is -cleanup: kube.Cleanup on the cluster f names, no spec run.
func cleanup(t *testing.T, f cmdline.Flags) {
	cfg, source, err := clusterConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.Cleanup(t.Context(), cfg, kube.Options{Source: source, Out: os.Stdout, ProxyConfig: f.ProxyConfig, ReadyTimeout: f.ReadyTimeout}); err != nil {
		t.Fatal(err)
	}
}

// clusterTarget is the kube target of the cluster f names.
func clusterTarget(ctx context.Context, f cmdline.Flags) (*kube.Target, error) {
	cfg, source, err := clusterConfig(f)
	if err != nil {
		return nil, err
	}
	if err := checkImages(f); err != nil {
		return nil, err
	}
	selector, err := kube.ParseNodeSelector(f.NodeSelector)
	if err != nil {
		return nil, err
	}
	return kube.New(ctx, cfg, kube.Options{
		Source: source, Image: f.Image, PullPolicy: f.PullPolicy, ReadyTimeout: f.ReadyTimeout, Out: os.Stdout,
		NodeSelector: selector, TolerateAll: f.TolerateAll, ProxyConfig: f.ProxyConfig,
	})
}

// clusterConfig is the rest.Config of -kubeconfig, or the in-cluster one,
// and where it came from.
func clusterConfig(f cmdline.Flags) (*rest.Config, string, error) {
	if f.InCluster {
		cfg, err := kubeconfig.InCluster()
		return cfg, kubeconfig.InClusterSource, err
	}
	cfg, err := kubeconfig.Load(f.Kubeconfig, f.Context, f.Netns)
	return cfg, f.Kubeconfig, err
}

// checkImages refuses an image the nodes would pull by a tag that is not
// digest-pinned (cmdline.CheckImage; -allow-tag turns the refusal into a
// warning). With pull policy Never the nodes run only what was loaded
// into them (clusters svclab creates), and no registry is involved.
// Upstream's agnhost, as the scenario pods' server, is upstream's tag.
func checkImages(f cmdline.Flags) error {
	if f.PullPolicy == "Never" {
		return nil
	}
	refs := []string{f.Image}
	if f.ServerImage != "" && !strings.HasPrefix(f.ServerImage, "registry.k8s.io/e2e-test-images/agnhost:") {
		refs = append(refs, f.ServerImage)
	}
	for _, ref := range refs {
		warning, err := cmdline.CheckImage(ref, f.AllowTag)
		if err != nil {
			return err
		}
		if warning != "" {
			fmt.Fprintln(os.Stderr, "warning: "+warning)
		}
	}
	return nil
}

// onKind runs the suite on a kind cluster made for the run through
// e2e-framework: its env functions, called from the suite's set-up,
// create the cluster with svclab's provider (kind's Go API, the offline
// node image) and, at the end, export its logs and delete it. The
// cluster has svclab's image preloaded (pull policy Never).
func onKind(t *testing.T, f cmdline.Flags) {
	roottest.Require(t, "runs dockerd and kind clusters")
	config, err := filepath.Abs(f.KindConfig)
	if err != nil {
		t.Fatal(err)
	}
	cni, proxy := f.KindCNI, f.KindProxy
	name := "e2e-" + strings.TrimSuffix(filepath.Base(config), ".yaml")
	families, err := kindFamilies(config, f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	setup := func(ctx context.Context) (kit.Target, error) {
		bin := f.SvclabBinary
		if bin == "" {
			if bin, err = roottest.Binary(dir); err != nil {
				return nil, err
			}
		}
		p := e2eprovider.New().WithCNI(cni).WithProxy(proxy).WithBinary(bin).WithOutput(GinkgoWriter)
		env := envconf.New()
		start := time.Now()
		created, err := envfuncs.CreateClusterWithConfig(p, name, config)(ctx, env)
		if err != nil {
			return nil, err
		}
		// From here on the cluster is deleted whatever happens.
		destroy := func(ctx context.Context) error {
			_, err := envfuncs.DestroyCluster(name)(context.WithoutCancel(created), env)
			return err
		}
		fmt.Fprintf(GinkgoWriter, "MEASURE create %s (cni %s, proxy %s): %s\n", name, cni, proxy, time.Since(start).Round(100*time.Millisecond))
		// Bad input: the name is in use; the error says so and the cluster stays.
		if _, err := kind.Create(ctx, kind.CreateOptions{ConfigFile: config, Name: name, CNI: cni, Proxy: proxy, SvclabBinary: bin}); err == nil || !strings.Contains(err.Error(), "already exists") {
			destroy(ctx)
			return nil, fmt.Errorf("a second cluster named %s: got %v, want an 'already exists' error", name, err)
		}
		// The agent tolerates every taint: the scenario pods may run on the
		// control plane too (a kind cluster's first node).
		target, err := kube.New(ctx, p.KubernetesRestConfig(), kube.Options{
			Source: p.GetKubeconfig(), Image: kind.NetexecImage, PullPolicy: "Never", ReadyTimeout: f.ReadyTimeout, Out: GinkgoWriter,
			TolerateAll: true,
		})
		if err != nil {
			destroy(ctx)
			return nil, err
		}
		return &closing{Target: target, after: destroy}, nil
	}
	run(t, "svclab conformance (kind: "+name+")", conformance.Options{Setup: setup, Families: families, Image: kind.NetexecImage, PullPolicy: "Never"})
}

// run registers the suite's specs with opts and runs them.
func run(t *testing.T, description string, opts conformance.Options) {
	opts.Disruptive = flags.Disruptive
	opts.Artifacts = flags.Artifacts // each failed spec's evidence (conformance/evidence.go)
	if err := conformance.Register(opts); err != nil {
		t.Fatal(err)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, description)
}

// closing is a target whose Close also runs after (the cluster's
// deletion), whether or not the target's own Close succeeded.
type closing struct {
	kit.Target
	after func(context.Context) error
}

func (c *closing) Close(ctx context.Context) error {
	err := c.Target.Close(ctx)
	if aerr := c.after(ctx); err == nil {
		err = aerr
	}
	return err
}

// TestArgsParseInTheBinary: the command line cmdline.Flags.Args builds
// parses back into the same Flags with this binary's flags, and every
// -ginkgo.* flag it passes is one ginkgo registered here. (Without a
// cluster; a fresh flag set, so this run's own flags stay as they are.)
func TestArgsParseInTheBinary(t *testing.T) {
	want := cmdline.Flags{
		Kubeconfig: "/k/config", Context: "ctx", Netns: "svclab-docker", Image: "reg/netexec:1", PullPolicy: "Never",
		ReadyTimeout: 2 * time.Minute, KindConfig: "/c/kind.yaml", KindCNI: "calico-proxyarp", KindProxy: "stock",
		SvclabBinary: "/b/svclab", AllowTag: true, ServerImage: "registry.k8s.io/e2e-test-images/agnhost:2.53",
		NodeSelector: "a=b", TolerateAll: true, ProxyConfig: "kube-system/kp", Disruptive: true, DryRun: true, Artifacts: "/a", Cleanup: true, IPFamily: "dual",
		JUnit: "/r/junit.xml", Focus: "split", LabelFilter: "nodeport", Timeout: 40 * time.Minute, Verbose: true,
	}
	fs := flag.NewFlagSet("svclab-conformance.test", flag.ContinueOnError)
	got := cmdline.Register(fs)
	ginkgo := map[string]string{}
	flag.CommandLine.VisitAll(func(fl *flag.Flag) {
		if strings.HasPrefix(fl.Name, "ginkgo.") {
			b, ok := fl.Value.(interface{ IsBoolFlag() bool })
			fs.Var(&recorder{name: fl.Name, into: ginkgo, isBool: ok && b.IsBoolFlag()}, fl.Name, fl.Usage)
		}
	})
	args := want.Args()
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	if rest := fs.Args(); len(rest) > 0 {
		t.Errorf("left unparsed: %q", rest)
	}
	ginkgoWant := cmdline.Flags{JUnit: ginkgo["ginkgo.junit-report"], Focus: ginkgo["ginkgo.focus"], LabelFilter: ginkgo["ginkgo.label-filter"], Verbose: ginkgo["ginkgo.v"] == "true"}
	if ginkgo["ginkgo.timeout"] != "" {
		d, err := time.ParseDuration(ginkgo["ginkgo.timeout"])
		if err != nil {
			t.Fatalf("-ginkgo.timeout=%s: %v", ginkgo["ginkgo.timeout"], err)
		}
		ginkgoWant.Timeout = d
	}
	got.JUnit, got.Focus, got.LabelFilter, got.Timeout, got.Verbose = ginkgoWant.JUnit, ginkgoWant.Focus, ginkgoWant.LabelFilter, ginkgoWant.Timeout, ginkgoWant.Verbose
	if *got != want {
		t.Errorf("%q parsed into\n%+v, want\n%+v", args, *got, want)
	}
	if ginkgo["ginkgo.no-color"] != "true" {
		t.Errorf("%q: colour not turned off", args)
	}
}

// recorder is a flag that notes the value it was given.
type recorder struct {
	name   string
	into   map[string]string
	isBool bool
}

func (r *recorder) String() string     { return "" }
func (r *recorder) Set(v string) error { r.into[r.name] = v; return nil }
func (r *recorder) IsBoolFlag() bool   { return r.isBool }
