package kind

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/svclab/svclab/internal/hostprog"

	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/internal/calico"
	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
	"github.com/svclab/svclab/labs/kind/internal/flannel"
	"github.com/svclab/svclab/labs/kind/internal/host"
	"github.com/svclab/svclab/labs/kind/internal/images"
	"github.com/svclab/svclab/labs/kind/internal/nodeimage"
)

// The steps of Create (createSteps), in their order.

// readConfig reads the kind v1alpha4 Cluster config (required).
func (cr *creation) readConfig() error {
	if cr.opts.ConfigFile == "" {
		return fmt.Errorf("a kind v1alpha4 Cluster config is required")
	}
	cfg, err := LoadConfig(cr.opts.ConfigFile)
	if err != nil {
		return err
	}
	cr.cfg = cfg
	return nil
}

// settle decides the name, pod network, proxy and its mode from the
// options, the config and the host (IPVS or not).
func (cr *creation) settle() error {
	s, err := resolveSettings(cr.cfg, cr.opts, hasIPVS())
	if err != nil {
		return err
	}
	cr.s = s
	return nil
}

// fetchCalicoManifest gets upstream Calico's manifest and checks its
// sha256 (--cni calico only).
func (cr *creation) fetchCalicoManifest() error {
	manifest, err := upstreamCalico(cr.ctx, cr.s, cr.opts.CalicoManifestSHA256, cr.cfg.Networking.PodSubnet, cr.out)
	if err != nil {
		return err
	}
	cr.calicoManifest = manifest
	return nil
}

// findSvclabBinary finds the svclab binary the images are made of.
func (cr *creation) findSvclabBinary() error {
	bin, err := svclabBinary(cr.opts.SvclabBinary)
	if err != nil {
		return err
	}
	cr.bin = bin
	return nil
}

// checkHostPrograms installs (or names) the host programs a cluster
// needs, before anything starts.
func (cr *creation) checkHostPrograms() error {
	return hostprog.Ensure(cr.ctx, cr.out, hostprog.Needs(hostprog.Cluster)...)
}

// startDocker finds a running Docker or starts svclab's dockerd, which
// a later failure releases.
func (cr *creation) startDocker() error {
	d, err := dockerhost.Ensure(cr.ctx, cr.out)
	if err != nil {
		return err
	}
	cr.d = d
	cr.onFailure(func(error) { dockerhost.Release(context.Background(), d, cr.out) })
	cr.provider = newProvider(d, cr.out)
	return nil
}

// checkDockerForCalico: upstream Calico needs a Docker of the user's
// (see checkCalicoDaemon).
func (cr *creation) checkDockerForCalico() error {
	return checkCalicoDaemon(cr.s.CNI, cr.d)
}

// trackHostChanges begins the window in which the nodes' changes of the
// host's sysctls are svclab's to put back when its dockerd stops (only
// those); Create, or a failure, ends it.
func (cr *creation) trackHostChanges() error {
	cr.hostChanges = cr.d.TrackHostChanges()
	cr.onFailure(func(error) { cr.hostChanges.Record(cr.out) })
	return nil
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

// createCluster has kind create the cluster from the adapted config (an
// ipv6 or dual one once the kind network is known to have IPv6, see
// checkKindNetworkIPv6). When kind fails, svclab's state of that name
// goes; when a later step fails, the cluster is deleted.
func (cr *creation) createCluster() error {
	s, out := cr.s, cr.out
	if err := checkKindNetworkIPv6(cr.ctx, cr.d, s.IPFamily); err != nil {
		return err
	}
	kubeconfig := kubeconfigPath(s.Name)
	if err := os.MkdirAll(clustersDir, 0o700); err != nil {
		return err
	}
	cfg := adaptConfig(cr.cfg, s, host.Detect())
	fmt.Fprintf(out, "creating cluster %s: %d nodes, cni %s, proxy %s (kubeProxyMode %s), image %s\n",
		s.Name, len(cfg.Nodes), s.CNI, s.Proxy, s.ProxyMode, cr.built.NodeImage)
	t := time.Now()
	err := cr.provider.Create(s.Name,
		cluster.CreateWithV1Alpha4Config(cfg),
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
	cr.onFailure(func(cause error) {
		fmt.Fprintf(out, "setting up %s failed, deleting it: %v\n", s.Name, cause)
		if derr := deleteCluster(context.Background(), cr.provider, s.Name, out); derr != nil {
			fmt.Fprintf(out, "deleting %s: %v\n", s.Name, derr)
		}
	})
	cr.c = &Cluster{Name: s.Name, CNI: s.CNI, Proxy: s.Proxy, ProxyMode: s.ProxyMode, NodeImage: cr.built.NodeImage,
		Kubeconfig: kubeconfig, DockerHost: cr.d.Host}
	if cr.d.Managed {
		cr.c.Namespace = dockerhost.Namespace
	}
	return nil
}

// listNodes notes the cluster's nodes (sorted) and finds its control
// plane.
func (cr *creation) listNodes() error {
	all, err := cr.provider.ListNodes(cr.c.Name)
	if err != nil {
		return err
	}
	for _, n := range all {
		cr.c.Nodes = append(cr.c.Nodes, n.String())
	}
	slices.Sort(cr.c.Nodes)
	cp, err := controlPlane(all)
	if err != nil {
		return err
	}
	cr.nodes, cr.cp = all, cp
	return nil
}

// loadNodeImages loads svclab's images (ensureImages) into every node.
func (cr *creation) loadNodeImages() error {
	t := time.Now()
	if err := loadImages(cr.ctx, cr.d, cr.nodes, cr.refs); err != nil {
		return err
	}
	fmt.Fprintf(cr.out, "loaded %v into %d nodes in %s\n", cr.refs, len(cr.nodes), time.Since(t).Round(10*time.Millisecond))
	return nil
}

// installPodNetwork applies the pod network's manifest, and svclab's
// proxy's when it replaces kube-proxy.
func (cr *creation) installPodNetwork() error {
	c := cr.c
	podSubnet := podSubnetOf(cr.cfg)
	p := cni.ManifestParams{Variant: c.CNI, Image: images.Svclab, ProxyImage: images.SvclabProxy, APIServerHost: c.Name + "-control-plane", APIServerPort: "6443", ClusterCIDR: podSubnet}
	manifest, err := podNetworkManifest(p, cr.s.IPFamily, cr.calicoManifest)
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
	return kubectlApply(cr.cp, manifest)
}

// waitForReady waits until the nodes and system pods are ready (the
// ReadyTimeout option, 3 minutes by default).
func (cr *creation) waitForReady() error {
	timeout := cr.opts.ReadyTimeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	t := time.Now()
	if err := waitReady(cr.cp, cr.c.CNI, cr.c.Proxy, timeout); err != nil {
		return err
	}
	fmt.Fprintf(cr.out, "nodes and system pods ready in %s\n", time.Since(t).Round(10*time.Millisecond))
	return nil
}

// installLoadBalancer gives the cluster its LoadBalancer pool and
// svclab's load balancer (see setUpLoadBalancer).
func (cr *creation) installLoadBalancer() error {
	return setUpLoadBalancer(cr.ctx, cr.d, cr.c, cr.cp, cr.out)
}

// podNetworkManifest is what installs the pod network: upstream's
// kube-flannel.yml for the real flannel (with its IPv6 settings for an
// ipv6 or dual cluster, p.ClusterCIDR then the comma list of kind's
// podSubnet), upstream's calico.yaml (verified by Create) for Calico,
// else svclab's CNI DaemonSet.
func podNetworkManifest(p cni.ManifestParams, family v1alpha4.ClusterIPFamily, calicoManifest string) (string, error) {
	switch p.Variant {
	case flannel.Name:
		return flannelManifest(family, p.ClusterCIDR)
	case calico.Name:
		if calicoManifest == "" {
			return "", fmt.Errorf("--cni calico: no verified upstream manifest")
		}
		return calicoManifest, nil
	}
	return cni.Manifest(p)
}
