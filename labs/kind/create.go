package kind

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/svclab/svclab/internal/hostprog"

	"github.com/svclab/svclab/labs/kind/internal/calico"
	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
	"github.com/svclab/svclab/labs/kind/internal/flannel"
	"github.com/svclab/svclab/labs/kind/internal/host"
	"github.com/svclab/svclab/labs/kind/internal/images"
	"github.com/svclab/svclab/labs/kind/internal/nodeimage"
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
	calicoManifest, err := upstreamCalico(ctx, s, opts.CalicoManifestSHA256, cfg.Networking.PodSubnet, out)
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
	if err := checkCalicoDaemon(s.CNI, d); err != nil {
		dockerhost.Release(context.Background(), d, out)
		return nil, err
	}
	cr := &creation{ctx: ctx, opts: opts, out: out, cfg: cfg, s: s, bin: bin, q: q, d: d, provider: newProvider(d, out), calicoManifest: calicoManifest}
	// The sysctls the nodes change on the host while they are made are
	// svclab's to put back when its dockerd stops (only those).
	hostChanges := d.TrackHostChanges()
	for _, step := range []func() error{
		cr.checkNameFree,
		cr.buildNodeImage,
		cr.ensureImages,
		cr.createCluster,
		cr.setUpOrDelete,
	} {
		// A step undoes its own part (createCluster removes svclab's state,
		// setUpOrDelete deletes the cluster); the daemon is released here.
		if err := step(); err != nil {
			hostChanges.Record(out)
			dockerhost.Release(context.Background(), d, out)
			return nil, err
		}
	}
	hostChanges.Record(out)
	c := cr.c
	c.Took = time.Since(start)
	d.Done() // the cluster keeps the daemon; this process is done with it
	if err := saveState(c); err != nil {
		return c, err
	}
	return c, nil
}

// creation is what the steps of Create share.
type creation struct {
	ctx      context.Context
	opts     CreateOptions
	out      io.Writer
	cfg      *v1alpha4.Cluster
	s        Settings
	bin      string // the svclab binary the images are made of
	q        host.Quirks
	d        *dockerhost.Daemon
	provider *cluster.Provider

	calicoManifest string // upstream's, verified (--cni calico only)

	built *nodeimage.Result
	refs  []string // svclab's images the nodes get
	c     *Cluster // kind created it
}

// checkNameFree fails when a kind cluster of that name exists.
func (cr *creation) checkNameFree() error {
	existing, err := cr.provider.List()
	if err != nil {
		return fmt.Errorf("listing kind clusters: %w", err)
	}
	if slices.Contains(existing, cr.s.Name) {
		return fmt.Errorf("cluster %q already exists (svclab delete cluster --name %s)", cr.s.Name, cr.s.Name)
	}
	return nil
}

// buildNodeImage builds (or finds) the node image.
func (cr *creation) buildNodeImage() error {
	built, err := nodeimage.Build(cr.ctx, cr.d, nodeimage.Options{Out: cr.out})
	if err != nil {
		return err
	}
	cr.built = built
	return nil
}

// ensureImages builds (or finds) the images the nodes get: svclab's
// netexec, svclab's CNI agent (svclab's pod networks) or the real
// flannel's two images (upstream Calico's the nodes pull from its
// registry), and svclab's proxy when it replaces kube-proxy.
func (cr *creation) ensureImages() error {
	// svclab alone: the CNI agent (svclab's pod networks) and the load
	// balancer (every cluster, whatever its pod network)
	cr.refs = []string{images.Netexec, images.Svclab}
	if cr.s.Proxy == ProxySvclab {
		cr.refs = append(cr.refs, images.SvclabProxy)
	}
	if err := images.Ensure(cr.ctx, cr.d, cr.bin, cr.built.RootfsTar, cr.refs, cr.out); err != nil {
		return err
	}
	if cr.s.CNI == flannel.Name {
		fl, err := nodeimage.BuildFlannel(cr.ctx, cr.d, cr.built.RootfsTar, nodeimage.Options{Out: cr.out})
		if err != nil {
			return err
		}
		cr.refs = append(cr.refs, fl.Images...)
	}
	return nil
}

// createCluster has kind create the cluster from the adapted config. When
// kind fails, svclab's state of that name goes.
func (cr *creation) createCluster() error {
	s, out := cr.s, cr.out
	kubeconfig := kubeconfigPath(s.Name)
	if err := os.MkdirAll(clustersDir, 0o700); err != nil {
		return err
	}
	fmt.Fprintf(out, "creating cluster %s: %d nodes, cni %s, proxy %s (kubeProxyMode %s), image %s\n",
		s.Name, len(adaptConfig(cr.cfg, s, cr.q).Nodes), s.CNI, s.Proxy, s.ProxyMode, cr.built.NodeImage)
	t := time.Now()
	err := cr.provider.Create(s.Name,
		cluster.CreateWithV1Alpha4Config(adaptConfig(cr.cfg, s, cr.q)),
		cluster.CreateWithNodeImage(cr.built.NodeImage),
		cluster.CreateWithKubeconfigPath(kubeconfig),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false))
	if err != nil {
		// kind deleted what it made; the name may still be taken by a
		// cluster someone else created meanwhile, so only our state goes.
		removeState(s.Name)
		return fmt.Errorf("kind create cluster %s: %w", s.Name, err)
	}
	fmt.Fprintf(out, "kind created %s in %s\n", s.Name, time.Since(t).Round(10*time.Millisecond))
	cr.c = &Cluster{Name: s.Name, CNI: s.CNI, Proxy: s.Proxy, ProxyMode: s.ProxyMode, NodeImage: cr.built.NodeImage,
		Kubeconfig: kubeconfig, DockerHost: cr.d.Host}
	if cr.d.Managed {
		cr.c.Namespace = dockerhost.Namespace
	}
	return nil
}

// setUpOrDelete sets the cluster up (see setUp); when that fails, it
// deletes the cluster.
func (cr *creation) setUpOrDelete() error {
	name, out := cr.s.Name, cr.out
	if err := setUp(cr.ctx, cr.provider, cr.d, cr.c, cr.refs, cr.cfg.Networking.PodSubnet, cr.calicoManifest, cr.opts.ReadyTimeout, out); err != nil {
		fmt.Fprintf(out, "setting up %s failed, deleting it: %v\n", name, err)
		if derr := deleteCluster(context.Background(), cr.provider, name, out); derr != nil {
			fmt.Fprintf(out, "deleting %s: %v\n", name, derr)
		}
		return err
	}
	return nil
}

// setUp loads svclab's images, installs the pod network and the proxy,
// waits until the cluster is ready, and installs the load balancer.
func setUp(ctx context.Context, provider *cluster.Provider, d *dockerhost.Daemon, c *Cluster, refs []string, podSubnet, calicoManifest string, timeout time.Duration, out io.Writer) error {
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
	manifest, err := podNetworkManifest(p, calicoManifest)
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
	if err := waitReady(cp, c.CNI, c.Proxy, timeout); err != nil {
		return err
	}
	if err := setUpLoadBalancer(ctx, d, c, cp, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "nodes and system pods ready in %s\n", time.Since(t).Round(10*time.Millisecond))
	return nil
}

// podNetworkManifest is what installs the pod network: upstream's
// kube-flannel.yml for the real flannel, upstream's calico.yaml (verified
// by Create) for Calico, else svclab's CNI DaemonSet.
func podNetworkManifest(p cni.ManifestParams, calicoManifest string) (string, error) {
	switch p.Variant {
	case flannel.Name:
		return flannel.Manifest(), nil
	case calico.Name:
		if calicoManifest == "" {
			return "", fmt.Errorf("--cni calico: no verified upstream manifest")
		}
		return calicoManifest, nil
	}
	return cni.Manifest(p)
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
