package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/svclab/svclab/labs/kind"
)

// Binary is the file name of the conformance test binary; `make build`
// puts it beside bin/svclab.
const Binary = "svclab-conformance.test"

// BinaryEnv names the environment variable that may point at the binary
// instead.
const BinaryEnv = "SVCLAB_CONFORMANCE_BIN"

// Defaults of the flags the binary and `svclab conformance` share.
const (
	DefaultImage        = kind.NetexecImage
	DefaultPullPolicy   = "IfNotPresent"
	DefaultReadyTimeout = 3 * time.Minute
	DefaultTimeout      = 60 * time.Minute
)

// Flags is one run of the conformance suite. The suite runs on a cluster
// reached through Kubeconfig, or on a kind cluster made for the run from
// KindConfig (and deleted at its end); exactly one of the two is set.
type Flags struct {
	// A cluster that exists: its kubeconfig file, the context ("" is the
	// file's current one), and the network namespace to reach its API
	// server from ("" is the caller's).
	Kubeconfig, Context, Netns string
	// Image is svclab's image for the scenario pods and the node agent;
	// PullPolicy its pull policy (Never on clusters svclab created).
	Image, PullPolicy string
	// ReadyTimeout bounds every wait (pods, endpoints, proxy syncs).
	ReadyTimeout time.Duration
	// InCluster runs on the cluster the process runs in (a Job's pod:
	// rest.InClusterConfig) instead of a kubeconfig.
	InCluster bool
	// AllowTag lets a cluster svclab did not create run Image by a tag
	// that is not digest-pinned (with a warning).
	AllowTag bool
	// ServerImage is the scenario pods' server image ("" is Image); it
	// may be upstream's agnhost (registry.k8s.io/e2e-test-images/agnhost),
	// whose netexec svclab's server is compatible with.
	ServerImage string
	// NodeSelector ("k=v,k2=v2") picks the nodes the node agent runs on
	// ("" is every node without a taint); TolerateAll lets it run on
	// tainted nodes too (control planes).
	NodeSelector string
	TolerateAll  bool
	// ProxyConfig ("NAMESPACE/NAME") is the ConfigMap holding the proxy's
	// KubeProxyConfiguration when it is not kubeadm's kube-system/kube-proxy.
	ProxyConfig string
	// Disruptive also runs the specs labelled Disruptive (the mode switch:
	// it rewrites the proxy's ConfigMap and restarts the proxy pods).
	Disruptive bool
	// DryRun prints what the suite found on the cluster and which specs
	// would run or skip, and why, then stops.
	DryRun bool
	// Artifacts is a directory for each failed spec's evidence (rules,
	// conntrack entries, a trace); "" is none (the JUnit still has it).
	Artifacts string
	// IPFamily picks the IP families the specs run in, as upstream's e2e
	// --ip-family does: ipv4, ipv6 or dual (both, and the dual-stack
	// specs); "" is every family the cluster has (IPFamilies).
	IPFamily string
	// Cleanup runs no spec: it removes what killed runs left on the
	// cluster and puts back a proxy ConfigMap one left changed (`svclab
	// conformance cleanup`, which runs the binary so that svclab links
	// none of the suite's cluster libraries).
	Cleanup bool

	// A kind cluster made for the run with svclab's e2e-framework
	// provider: its kind config file, pod network and proxy, and the
	// svclab binary its images are made from ("" is $SVCLAB_BIN, else one
	// built from the source tree). It runs svclab's preloaded image with
	// pull policy Never, whatever Image and PullPolicy say.
	KindConfig, KindCNI, KindProxy, SvclabBinary string

	// ginkgo's settings: the JUnit XML report ("" is none), a focus
	// regular expression, a label filter, the bound of the whole run, and
	// whether every spec's steps are printed.
	JUnit, Focus, LabelFilter string
	Timeout                   time.Duration
	Verbose                   bool
}

// The binary's own flag names.
const (
	flagKubeconfig   = "kubeconfig"
	flagContext      = "context"
	flagNetns        = "netns"
	flagImage        = "image"
	flagPullPolicy   = "pull-policy"
	flagReadyTimeout = "ready-timeout"
	flagInCluster    = "in-cluster"
	flagAllowTag     = "allow-tag"
	flagServerImage  = "server-image"
	flagNodeSelector = "node-selector"
	flagTolerateAll  = "tolerate-all"
	flagProxyConfig  = "proxy-config"
	flagDisruptive   = "disruptive"
	flagDryRun       = "dry-run"
	flagArtifacts    = "artifacts"
	flagCleanup      = "cleanup"
	flagKindConfig   = "kind-config"
	flagKindCNI      = "kind-cni"
	flagKindProxy    = "kind-proxy"
	flagSvclabBinary = "svclab-binary"
	flagIPFamily     = "ip-family"
)

// Register defines the binary's own flags on fs (flag.CommandLine in the
// binary) and returns the Flags they fill; the ginkgo fields stay zero
// (ginkgo parses its own flags).
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Kubeconfig, flagKubeconfig, "", "run on the cluster of this kubeconfig file")
	fs.StringVar(&f.Context, flagContext, "", "kubeconfig context (default: its current context)")
	fs.StringVar(&f.Netns, flagNetns, "", "reach the API server from this network namespace (svclab-docker for clusters on svclab's dockerd)")
	fs.StringVar(&f.Image, flagImage, DefaultImage, "svclab's image for the scenario pods and the node agent")
	fs.StringVar(&f.PullPolicy, flagPullPolicy, DefaultPullPolicy, "image pull policy (Never on clusters svclab created)")
	fs.DurationVar(&f.ReadyTimeout, flagReadyTimeout, DefaultReadyTimeout, "bound of every wait (pods, endpoints, proxy syncs)")
	fs.BoolVar(&f.InCluster, flagInCluster, false, "run on the cluster this process runs in (a Job's pod), with its service account")
	fs.BoolVar(&f.AllowTag, flagAllowTag, false, "allow an image reference that is not digest-pinned on a cluster svclab did not create")
	fs.StringVar(&f.ServerImage, flagServerImage, "", "the scenario pods' server image (default: -image; upstream's agnhost works)")
	fs.StringVar(&f.NodeSelector, flagNodeSelector, "", "run the node agent only on nodes with these labels (k=v,k2=v2)")
	fs.BoolVar(&f.TolerateAll, flagTolerateAll, false, "let the node agent run on tainted nodes (control planes) too")
	fs.StringVar(&f.ProxyConfig, flagProxyConfig, "", "NAMESPACE/NAME of the ConfigMap with the proxy's KubeProxyConfiguration (default kube-system/kube-proxy)")
	fs.BoolVar(&f.Disruptive, flagDisruptive, false, "also run the Disruptive specs (the mode switch rewrites the proxy's ConfigMap and restarts its pods)")
	fs.BoolVar(&f.DryRun, flagDryRun, false, "print what was found on the cluster and which specs would run or skip, and why; change nothing")
	fs.BoolVar(&f.Cleanup, flagCleanup, false, "run no spec: remove what killed runs left on the cluster and put back a proxy ConfigMap one left changed")
	fs.StringVar(&f.Artifacts, flagArtifacts, "", "write each failed spec's evidence (rules, conntrack, trace) under this directory")
	fs.StringVar(&f.KindConfig, flagKindConfig, "", "run on a kind cluster made for the run from this kind config file (root; deleted at the end)")
	fs.StringVar(&f.KindCNI, flagKindCNI, "", "the kind cluster's pod network (with -kind-config)")
	fs.StringVar(&f.KindProxy, flagKindProxy, "", "the kind cluster's proxy, stock or svclab (with -kind-config)")
	fs.StringVar(&f.IPFamily, flagIPFamily, "", "the IP families the specs run in: ipv4, ipv6 or dual (default: every family the cluster has)")
	fs.StringVar(&f.SvclabBinary, flagSvclabBinary, "", "the svclab binary the kind cluster's images are made from (default $SVCLAB_BIN, else built)")
	return f
}

// Args is the binary's command line for f: its own flags where set, then
// ginkgo's (colour off, as in a CI log).
func (f Flags) Args() []string {
	var args []string
	str := func(name, v string) {
		if v != "" {
			args = append(args, "-"+name+"="+v)
		}
	}
	dur := func(name string, v time.Duration) {
		if v != 0 {
			args = append(args, "-"+name+"="+v.String())
		}
	}
	str(flagKubeconfig, f.Kubeconfig)
	str(flagContext, f.Context)
	str(flagNetns, f.Netns)
	str(flagImage, f.Image)
	str(flagPullPolicy, f.PullPolicy)
	dur(flagReadyTimeout, f.ReadyTimeout)
	boolean := func(name string, v bool) {
		if v {
			args = append(args, "-"+name)
		}
	}
	boolean(flagInCluster, f.InCluster)
	boolean(flagAllowTag, f.AllowTag)
	str(flagServerImage, f.ServerImage)
	str(flagNodeSelector, f.NodeSelector)
	boolean(flagTolerateAll, f.TolerateAll)
	str(flagProxyConfig, f.ProxyConfig)
	boolean(flagDisruptive, f.Disruptive)
	boolean(flagDryRun, f.DryRun)
	str(flagArtifacts, f.Artifacts)
	boolean(flagCleanup, f.Cleanup)
	str(flagKindConfig, f.KindConfig)
	str(flagKindCNI, f.KindCNI)
	str(flagKindProxy, f.KindProxy)
	str(flagSvclabBinary, f.SvclabBinary)
	str(flagIPFamily, f.IPFamily)

	str("ginkgo.junit-report", f.JUnit)
	str("ginkgo.focus", f.Focus)
	str("ginkgo.label-filter", f.LabelFilter)
	dur("ginkgo.timeout", f.Timeout)
	if f.Verbose {
		args = append(args, "-ginkgo.v")
	}
	return append(args, "-ginkgo.no-color")
}

// Check says what is wrong with a set of flags the binary was given.
func (f Flags) Check() error {
	switch {
	case f.Kubeconfig != "" && f.KindConfig != "":
		return fmt.Errorf("-%s and -%s exclude each other: run on a cluster that exists, or on one made for the run", flagKubeconfig, flagKindConfig)
	case f.InCluster && (f.Kubeconfig != "" || f.KindConfig != ""):
		return fmt.Errorf("-%s excludes -%s and -%s: the cluster is the one this process runs in", flagInCluster, flagKubeconfig, flagKindConfig)
	case f.KindConfig == "" && (f.KindCNI != "" || f.KindProxy != "" || f.SvclabBinary != ""):
		return fmt.Errorf("-%s, -%s and -%s need -%s", flagKindCNI, flagKindProxy, flagSvclabBinary, flagKindConfig)
	}
	_, err := IPFamilies(f.IPFamily)
	return err
}

// IPFamilies are the Kubernetes IP families (IPv4, IPv6) an -ip-family
// value names, in order: ipv4, ipv6, or dual (IPv4 then IPv6); "" is
// none (the cluster's, found at the start of the run).
func IPFamilies(value string) ([]string, error) {
	switch value {
	case "":
		return nil, nil
	case "ipv4":
		return []string{"IPv4"}, nil
	case "ipv6":
		return []string{"IPv6"}, nil
	case "dual":
		return []string{"IPv4", "IPv6"}, nil
	}
	return nil, fmt.Errorf("-%s %q: want ipv4, ipv6 or dual (or none: every family the cluster has)", flagIPFamily, value)
}

// Find is the conformance test binary `svclab conformance` runs:
// $SVCLAB_CONFORMANCE_BIN when set, else Binary beside the running
// executable (or beside the file it is a symbolic link to). The error
// says that `make build` builds it.
func Find() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if err := isFile(p); err != nil {
			return "", fmt.Errorf("$%s: %w (`make build` builds bin/%s)", BinaryEnv, err, Binary)
		}
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the conformance test binary %s: %w (or set $%s)", Binary, err, BinaryEnv)
	}
	tried := []string{filepath.Join(filepath.Dir(exe), Binary)}
	if real, err := filepath.EvalSymlinks(exe); err == nil && filepath.Dir(real) != filepath.Dir(exe) {
		tried = append(tried, filepath.Join(filepath.Dir(real), Binary))
	}
	for _, p := range tried {
		if isFile(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("the conformance test binary %s is not beside %s (looked for %v; or set $%s): `make build` builds it next to bin/svclab",
		Binary, exe, tried, BinaryEnv)
}

func isFile(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return errors.New(p + " is a directory")
	}
	return nil
}
