package kind

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/svclab/svclab/internal/status"

	"github.com/svclab/svclab/labs/kind/internal/calico"
	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
	"github.com/svclab/svclab/labs/kind/internal/flannel"
	"github.com/svclab/svclab/labs/kind/internal/images"
	"github.com/svclab/svclab/labs/kind/internal/nodeimage"
)

// What callers outside the kind backend may know of its insides: the
// names below are the whole facade, next to Create, Delete, List,
// Kubeconfig (create.go, delete.go, list.go) and the two in-node entry
// points, packages cni and loadbalancer.
const (
	// DefaultKubernetes is the Kubernetes version BuildImages builds and
	// Create runs by default.
	DefaultKubernetes = nodeimage.DefaultKubernetes
	// DockerNamespace is the network namespace svclab's own dockerd, and
	// so every kind node, lives in.
	DockerNamespace = dockerhost.Namespace
	// NetexecImage is the image Create imports into every node: svclab's
	// binary as the pods' server and the node agent.
	NetexecImage = images.Netexec
	// ProxyImage is the image `--proxy svclab` runs svclab's proxy from
	// (svclab on the node's root filesystem, with iptables), preloaded on
	// every node of clusters svclab creates.
	ProxyImage = images.SvclabProxy
	// CNIFlannel and CNICalico name upstream's CNIs (--cni);
	// FlannelVersion is the flannel release --cni flannel runs.
	CNIFlannel     = flannel.Name
	CNICalico      = calico.Name
	FlannelVersion = flannel.Version
)

// CalicoVersion is the Calico release --cni calico applies.
var CalicoVersion = calico.Release.Version

// BuildOptions are BuildImages' options.
type BuildOptions struct {
	// Kubernetes is the version to build ("": DefaultKubernetes).
	Kubernetes string
	// Flannel also builds the real flannel's images (--cni flannel).
	Flannel bool
	// Out receives each step as it starts and ends, and the result.
	Out io.Writer
}

// BuildImages builds the offline node image and the component images
// (and flannel's with opts.Flannel) on svclab's dockerd, which it starts
// when none runs and releases after. Every step is cached, and announced
// on opts.Out as it starts and marked as it ends (internal/status: a
// spinner with the time running on a terminal, plain lines when piped).
func BuildImages(ctx context.Context, opts BuildOptions) (err error) {
	out := status.New(opts.Out)
	var d *dockerhost.Daemon
	if err := out.Run("start Docker", func() (err error) {
		d, err = dockerhost.Ensure(ctx, out)
		return err
	}); err != nil {
		return err
	}
	defer func() {
		if rerr := dockerhost.Release(ctx, d, out); err == nil {
			err = rerr
		}
	}()
	v := nodeimage.DefaultVersions()
	if opts.Kubernetes != "" {
		v.Kubernetes = opts.Kubernetes
	}
	res, err := nodeimage.Build(ctx, d, nodeimage.Options{Versions: v, Out: out})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "node image %s ready in %s\n", res.NodeImage, res.Took.Round(time.Second/10))
	if !opts.Flannel {
		return nil
	}
	fl, err := nodeimage.BuildFlannel(ctx, d, res.RootfsTar, nodeimage.Options{Out: out})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "flannel images %v ready in %s\n", fl.Images, fl.Took.Round(time.Second/10))
	return nil
}

// StopDocker stops svclab's dockerd (deleting whatever runs on it),
// deletes its namespace and restores the host's settings it changed.
func StopDocker(ctx context.Context, out io.Writer) error { return dockerhost.Stop(ctx, out) }

// DockerLeftovers reports whether anything of svclab's dockerd is left
// (its namespace, process, mounts or files).
func DockerLeftovers() bool { return dockerhost.Leftovers() }

// HostSysctls reads the host sysctls svclab's dockerd may change, so a
// test can compare them before and after.
func HostSysctls() (map[string]string, error) { return dockerhost.SnapshotSysctls() }

// FlannelFacts is what a node running --cni flannel shows: the DaemonSet's
// namespace and image, the VXLAN device with its VNI and port, and the
// pod network (all read from the manifest svclab applies); DeviceIPv6 is
// the IPv6 VXLAN device flanneld adds on an ipv6 or dual cluster
// (flannel-v6.<VNI>, same VNI and port).
type FlannelFacts struct {
	Namespace, Image, Device string
	DeviceIPv6               string
	VNI, Port                int
	Network                  string
}

// Flannel returns the facts of the flannel manifest --cni flannel applies.
func Flannel() (FlannelFacts, error) {
	info, err := flannel.Parse(flannel.Manifest())
	if err != nil {
		return FlannelFacts{}, err
	}
	vni, port := info.Backend.VXLAN()
	return FlannelFacts{Namespace: flannel.Namespace, Image: info.FlannelImage, Device: flannel.Device, DeviceIPv6: flannel.DeviceIPv6(vni), VNI: vni, Port: port, Network: info.Network.String()}, nil
}
