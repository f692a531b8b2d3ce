package kind

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/svclab/svclab/internal/hostprog"

	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/dockerhost"
	"github.com/svclab/svclab/labs/kind/host"
	"github.com/svclab/svclab/labs/kind/images"
	"github.com/svclab/svclab/labs/kind/nodeimage"
)

// Create makes a cluster: it checks the input, makes sure Docker runs and
// the images exist (building what is missing), creates the cluster with
// kind, loads svclab's images into the nodes, installs the pod network
// (and svclab's proxy), and waits for the nodes and system pods.
func Create(ctx context.Context, opts CreateOptions) (*Cluster, error) {
	start := time.Now()
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	if opts.ConfigFile == "" {
		return nil, fmt.Errorf("a kind v1alpha4 Cluster config is required")
	}
	cfg, err := LoadConfig(opts.ConfigFile)
	if err != nil {
		return nil, err
	}
	s, err := resolveSettings(cfg, opts, hasIPVS())
	if err != nil {
		return nil, err
	}
	bin, err := svclabBinary(opts.SvclabBinary)
	if err != nil {
		return nil, err
	}
	q := host.Detect()

	if err := hostprog.Ensure(ctx, out, hostprog.Needs(hostprog.Cluster)...); err != nil {
		return nil, err
	}
	d, err := dockerhost.Ensure(ctx, out)
	if err != nil {
		return nil, err
	}
	release := func() { dockerhost.Release(context.Background(), d, out) }
	provider := newProvider(d, out)
	existing, err := provider.List()
	if err != nil {
		release()
		return nil, fmt.Errorf("listing kind clusters: %w", err)
	}
	if slices.Contains(existing, s.Name) {
		release()
		return nil, fmt.Errorf("cluster %q already exists (svclab delete cluster --name %s)", s.Name, s.Name)
	}
	built, err := nodeimage.Build(ctx, d, nodeimage.Options{Out: out})
	if err != nil {
		release()
		return nil, err
	}
	refs := []string{images.Netexec, images.Svclab}
	if s.Proxy == ProxySvclab {
		refs = append(refs, images.SvclabProxy)
	}
	if err := images.Ensure(ctx, d, bin, built.RootfsTar, refs, out); err != nil {
		release()
		return nil, err
	}

	kubeconfig := kubeconfigPath(s.Name)
	if err := os.MkdirAll(clustersDir, 0o700); err != nil {
		release()
		return nil, err
	}
	fmt.Fprintf(out, "creating cluster %s: %d nodes, cni %s, proxy %s (kubeProxyMode %s), image %s\n",
		s.Name, len(adaptConfig(cfg, s, q).Nodes), s.CNI, s.Proxy, s.ProxyMode, built.NodeImage)
	t := time.Now()
	err = provider.Create(s.Name,
		cluster.CreateWithV1Alpha4Config(adaptConfig(cfg, s, q)),
		cluster.CreateWithNodeImage(built.NodeImage),
		cluster.CreateWithKubeconfigPath(kubeconfig),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false))
	if err != nil {
		// kind deleted what it made; the name may still be taken by a
		// cluster someone else created meanwhile, so only our state goes.
		removeState(s.Name)
		release()
		return nil, fmt.Errorf("kind create cluster %s: %w", s.Name, err)
	}
	fmt.Fprintf(out, "kind created %s in %s\n", s.Name, time.Since(t).Round(10*time.Millisecond))
	c := &Cluster{Name: s.Name, CNI: s.CNI, Proxy: s.Proxy, ProxyMode: s.ProxyMode, NodeImage: built.NodeImage,
		Kubeconfig: kubeconfig, DockerHost: d.Host}
	if d.Managed {
		c.Namespace = dockerhost.Namespace
	}
	if err := setUp(ctx, provider, d, c, refs, cfg.Networking.PodSubnet, opts.ReadyTimeout, out); err != nil {
		fmt.Fprintf(out, "setting up %s failed, deleting it: %v\n", s.Name, err)
		if derr := deleteCluster(context.Background(), provider, s.Name, out); derr != nil {
			fmt.Fprintf(out, "deleting %s: %v\n", s.Name, derr)
		}
		release()
		return nil, err
	}
	c.Took = time.Since(start)
	d.Done() // the cluster keeps the daemon; this process is done with it
	if err := saveState(c); err != nil {
		return c, err
	}
	return c, nil
}

// setUp loads svclab's images, installs the pod network and the proxy,
// and waits until the cluster is ready.
func setUp(ctx context.Context, provider *cluster.Provider, d *dockerhost.Daemon, c *Cluster, refs []string, podSubnet string, timeout time.Duration, out io.Writer) error {
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	if podSubnet == "" {
		podSubnet = DefaultPodSubnet
	}
	nodes, err := provider.ListNodes(c.Name)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		c.Nodes = append(c.Nodes, n.String())
	}
	slices.Sort(c.Nodes)
	t := time.Now()
	if err := loadImages(ctx, d, nodes, refs); err != nil {
		return err
	}
	fmt.Fprintf(out, "loaded %v into %d nodes in %s\n", refs, len(nodes), time.Since(t).Round(10*time.Millisecond))
	cp, err := controlPlane(nodes)
	if err != nil {
		return err
	}
	p := cni.ManifestParams{Variant: c.CNI, Image: images.Svclab, ProxyImage: images.SvclabProxy, APIServerHost: c.Name + "-control-plane", APIServerPort: "6443", ClusterCIDR: podSubnet}
	manifest, err := cni.Manifest(p)
	if err != nil {
		return err
	}
	if c.Proxy == ProxySvclab {
		pm, err := cni.ProxyManifest(p)
		if err != nil {
			return err
		}
		manifest += "---\n" + pm
	}
	if err := kubectlApply(cp, manifest); err != nil {
		return err
	}
	t = time.Now()
	if err := waitReady(cp, c.Proxy, timeout); err != nil {
		return err
	}
	fmt.Fprintf(out, "nodes and system pods ready in %s\n", time.Since(t).Round(10*time.Millisecond))
	return nil
}

func svclabBinary(path string) (string, error) {
	if path == "" {
		path = os.Getenv("SVCLAB_BIN")
	}
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", err
		}
		path = exe
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("the svclab binary for the cluster's images: %w (set SVCLAB_BIN)", err)
	}
	return path, nil
}

func hasIPVS() bool {
	_, err := os.Stat("/proc/net/ip_vs")
	return err == nil
}
