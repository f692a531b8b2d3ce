package e2eprovider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/types"

	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/internal/nodeimage"
)

// The provider is checked against e2e-framework's interface at compile time.
var _ types.E2EClusterProviderWithImageLoader = (*Provider)(nil)

// DefaultReadyTimeout bounds WaitForControlPlane when its context has no
// deadline and no ready timeout was set.
const DefaultReadyTimeout = 3 * time.Minute

// ErrNoConfig is Create's error when it is given no kind config.
var ErrNoConfig = errors.New(`svclab's kind backend needs a kind v1alpha4 Cluster config file: ` +
	`use CreateWithConfig(ctx, file) (envfuncs.CreateClusterWithConfig) or Create(ctx, "--config", file)`)

// Provider creates and deletes a kind cluster with svclab's kind backend,
// for e2e-framework. Its zero value (or New) is ready to use; it is not
// safe for concurrent use.
type Provider struct {
	name    string // cluster name ("" = the config's, else kind.DefaultName)
	version string // Kubernetes version asked for ("" = svclab's)

	// What kind.CreateOptions takes besides the config file and the name.
	cni          string
	proxy        string
	svclabBinary string
	out          io.Writer
	readyTimeout time.Duration

	kubeconfig string        // the kubeconfig file this provider wrote
	cluster    *kind.Cluster // the cluster, once created
	restConfig *rest.Config  // KubernetesRestConfig's, cached
}

// New returns a provider with svclab's defaults (see kind.CreateOptions).
func New() *Provider { return &Provider{} }

// WithName sets the cluster's name (default: the config's name, else
// kind.DefaultName).
func (p *Provider) WithName(name string) types.E2EClusterProvider {
	p.name = name
	return p
}

// WithVersion asks for a Kubernetes version. svclab's node image runs one
// version, nodeimage.DefaultKubernetes: Create fails if another one is
// asked for ("" and that version, with or without its "v", are accepted).
func (p *Provider) WithVersion(version string) types.E2EClusterProvider {
	p.version = version
	return p
}

// WithPath is accepted and ignored: no kind binary is run (kind's Go API
// is built into svclab).
func (p *Provider) WithPath(string) types.E2EClusterProvider { return p }

// WithOpts applies e2e-framework cluster options, each called with p.
// Options written for another provider type (such as e2e-framework's kind
// support.WithImage) check the type they get and do nothing here.
func (p *Provider) WithOpts(opts ...types.ClusterOpts) types.E2EClusterProvider {
	for _, o := range opts {
		if o != nil {
			o(p)
		}
	}
	return p
}

// WithCNI chooses the pod network, one of kind.PodNetworks:
// cni.FlannelVXLAN (default) or cni.CalicoProxyARP (svclab's CNI), or
// flannel.Name (the real flannel).
func (p *Provider) WithCNI(name string) *Provider {
	p.cni = name
	return p
}

// WithProxy chooses the Service proxy: kind.ProxyStock (kube-proxy,
// default) or kind.ProxySvclab.
func (p *Provider) WithProxy(proxy string) *Provider {
	p.proxy = proxy
	return p
}

// WithBinary sets the svclab binary put into the cluster's images
// (default: $SVCLAB_BIN, else the running executable — which, in a test,
// is the test binary, so set this or SVCLAB_BIN).
func (p *Provider) WithBinary(path string) *Provider {
	p.svclabBinary = path
	return p
}

// WithOutput sets where progress is written (nil, the default, is quiet).
func (p *Provider) WithOutput(w io.Writer) *Provider {
	p.out = w
	return p
}

// WithReadyTimeout bounds the wait for the nodes and system pods at create
// time, and WaitForControlPlane when its context has no deadline
// (default 3 minutes).
func (p *Provider) WithReadyTimeout(d time.Duration) *Provider {
	p.readyTimeout = d
	return p
}

// SetDefaults sets the ready timeout to DefaultReadyTimeout if it is
// unset; every other default is package kind's.
func (p *Provider) SetDefaults() types.E2EClusterProvider {
	if p.readyTimeout == 0 {
		p.readyTimeout = DefaultReadyTimeout
	}
	return p
}

// Cluster is the cluster Create made (nil before, and after Destroy).
func (p *Provider) Cluster() *kind.Cluster { return p.cluster }

// Namespace is the network namespace the cluster's API server is reached
// from ("" when it is reachable from anywhere on the host, or not known).
func (p *Provider) Namespace() string {
	if p.cluster == nil {
		return ""
	}
	return p.cluster.Namespace
}

// Create creates the cluster from the kind config given as "--config",
// file (or "--config=file"); svclab cannot create a cluster without one
// (ErrNoConfig). It returns the path of the kubeconfig file it writes.
func (p *Provider) Create(ctx context.Context, args ...string) (string, error) {
	file, err := configArg(args)
	if err != nil {
		return "", err
	}
	return p.CreateWithConfig(ctx, file)
}

// CreateWithConfig creates the cluster from a kind v1alpha4 Cluster config
// with kind.Create (images built and loaded, pod network and proxy
// installed, nodes and system pods ready), writes its kubeconfig into a
// new file in os.TempDir and returns that file's path.
func (p *Provider) CreateWithConfig(ctx context.Context, configFile string) (string, error) {
	if configFile == "" {
		return "", ErrNoConfig
	}
	if err := p.checkVersion(); err != nil {
		return "", err
	}
	if p.cluster != nil {
		return "", fmt.Errorf("this provider already created cluster %s", p.cluster.Name)
	}
	c, err := kind.Create(ctx, kind.CreateOptions{
		ConfigFile:   configFile,
		Name:         p.name,
		CNI:          p.cni,
		Proxy:        p.proxy,
		SvclabBinary: p.svclabBinary,
		Out:          p.out,
		ReadyTimeout: p.readyTimeout,
	})
	if c != nil {
		// kind.Create returns the cluster with an error when only saving
		// svclab's record of it failed: keep it, so that Destroy works.
		p.cluster, p.name, p.restConfig = c, c.Name, nil
	}
	if err != nil {
		return "", err
	}
	path, err := p.GenerateKubeconfig()
	if err != nil {
		return "", err
	}
	if _, err := p.restConfigOrErr(); err != nil {
		return path, err
	}
	return path, nil
}

// GetKubeconfig is the path of the kubeconfig file Create (or
// GenerateKubeconfig) wrote, "" before.
func (p *Provider) GetKubeconfig() string { return p.kubeconfig }

// GenerateKubeconfig gets the cluster's kubeconfig from kind again and
// writes it into GetKubeconfig's file (creating it if there is none yet),
// returning its path. With "--internal" it writes the internal kubeconfig
// (the control-plane container's name:6443, for use from the nodes'
// network) into a new file instead, and returns that file's path.
func (p *Provider) GenerateKubeconfig(args ...string) (string, error) {
	internal := false
	for _, a := range args {
		if a != "--internal" {
			return "", fmt.Errorf("GenerateKubeconfig: argument %q: only --internal is known", a)
		}
		internal = true
	}
	if p.name == "" {
		return "", errors.New("GenerateKubeconfig: no cluster name (create the cluster or call WithName first)")
	}
	content, err := kind.Kubeconfig(context.Background(), p.name, internal)
	if err != nil {
		return "", fmt.Errorf("kubeconfig of %s: %w", p.name, err)
	}
	if internal {
		return writeTemp(p.name+"-internal", content)
	}
	if p.kubeconfig == "" {
		path, err := writeTemp(p.name, content)
		if err != nil {
			return "", err
		}
		p.kubeconfig = path
	} else if err := os.WriteFile(p.kubeconfig, []byte(content), 0o600); err != nil {
		return "", err
	}
	p.restConfig = nil
	return p.kubeconfig, nil
}

// GetKubectlContext is kind's context name in the kubeconfig: "kind-" and
// the cluster's name.
func (p *Provider) GetKubectlContext() string { return "kind-" + p.name }

// Destroy deletes the cluster with kind.Delete (which exports its logs
// into kind.LogsDir first, and stops svclab's dockerd when no cluster is
// left on it), then removes the kubeconfig file this provider wrote.
// Destroying a cluster that does not exist is not an error.
func (p *Provider) Destroy(ctx context.Context) error {
	if p.name == "" {
		return errors.New("Destroy: no cluster name (create the cluster or call WithName first)")
	}
	if err := kind.Delete(ctx, p.name, p.out); err != nil {
		return err
	}
	if p.kubeconfig != "" {
		if err := os.Remove(p.kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	p.kubeconfig, p.cluster, p.restConfig = "", nil, nil
	return nil
}

// KubernetesRestConfig is a rest.Config for the cluster from the
// kubeconfig file, whose connections are dialled from the cluster's
// network namespace (see RestConfig); nil before Create or if the file
// cannot be read.
func (p *Provider) KubernetesRestConfig() *rest.Config {
	cfg, err := p.restConfigOrErr()
	if err != nil {
		return nil
	}
	return cfg
}

func (p *Provider) restConfigOrErr() (*rest.Config, error) {
	if p.restConfig != nil {
		return p.restConfig, nil
	}
	if p.kubeconfig == "" {
		return nil, errors.New("no kubeconfig yet: create the cluster first")
	}
	cfg, err := RestConfig(p.kubeconfig, p.Namespace())
	if err != nil {
		return nil, err
	}
	p.restConfig = cfg
	return cfg, nil
}

// Client is an e2e-framework client on KubernetesRestConfig: unlike one
// made from the kubeconfig file (envconf.Config's default), it reaches a
// cluster of svclab's dockerd.
func (p *Provider) Client() (klient.Client, error) {
	cfg, err := p.restConfigOrErr()
	if err != nil {
		return nil, err
	}
	return klient.New(cfg)
}

// UseClient is an environment step that makes Client the environment's
// client (envconf.Config.WithClient); put it after the step that creates
// the cluster.
func (p *Provider) UseClient() types.EnvFunc {
	return func(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
		c, err := p.Client()
		if err != nil {
			return ctx, err
		}
		cfg.WithClient(c)
		return ctx, nil
	}
}

// checkVersion fails unless the version asked for is the node image's.
func (p *Provider) checkVersion() error {
	if p.version == "" || strings.TrimPrefix(p.version, "v") == strings.TrimPrefix(nodeimage.DefaultKubernetes, "v") {
		return nil
	}
	return fmt.Errorf("kind provider: Kubernetes %s is not available: svclab's node image runs %s only", p.version, nodeimage.DefaultKubernetes)
}

// configArg finds the config file in Create's arguments: "--config",
// file or "--config=file" (an argument holding both, space-separated, as
// e2e-framework's kind support would pass them, is accepted too).
func configArg(args []string) (string, error) {
	var words []string
	for _, a := range args {
		words = append(words, strings.Fields(a)...)
	}
	file := ""
	for i := 0; i < len(words); i++ {
		switch w := words[i]; {
		case w == "--config":
			if i+1 == len(words) {
				return "", errors.New("--config needs a file")
			}
			i++
			file = words[i]
		case strings.HasPrefix(w, "--config="):
			file = strings.TrimPrefix(w, "--config=")
		default:
			return "", fmt.Errorf("argument %q: Create takes only --config FILE (set the rest with the provider's With… methods)", w)
		}
	}
	if file == "" {
		return "", ErrNoConfig
	}
	return file, nil
}

// writeTemp writes a kubeconfig into a new private file in os.TempDir.
func writeTemp(name, content string) (string, error) {
	f, err := os.CreateTemp("", "svclab-kind-"+name+"-*.kubeconfig")
	if err != nil {
		return "", err
	}
	if _, err := io.WriteString(f, content); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
