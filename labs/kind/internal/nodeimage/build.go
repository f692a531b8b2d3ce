package nodeimage

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/svclab/svclab/internal/hostprog"

	"github.com/svclab/svclab/internal/cmdrun"
	"github.com/svclab/svclab/internal/status"
	"github.com/svclab/svclab/labs/kind/internal/cache"
	"github.com/svclab/svclab/labs/kind/internal/host"
)

// Options configure Build.
type Options struct {
	Versions Versions     // zero value: DefaultVersions()
	CacheDir string       // default cache.Dir()
	Out      io.Writer    // progress: each step as it starts and ends (internal/status); nil: quiet
	Quirks   *host.Quirks // default host.Detect()
}

// Step is one build step and what it cost.
type Step struct {
	Name    string
	Product string // a path in the cache or an image reference
	Cached  bool   // the product was already there
	Took    time.Duration
}

// Result is what Build made.
type Result struct {
	NodeImage  string   // the image `kind create cluster --image` gets
	Images     []string // the component images preloaded into it
	Kubernetes string
	KubeBin    string // directory with kubeadm, kubectl, kube-proxy…
	RootfsTar  string // the node's root filesystem, also the base of tool images
	Steps      []Step
	Took       time.Duration
}

// Build makes (or finds in the cache) the node image and everything it is
// made of. d is the Docker daemon the images go to.
func Build(ctx context.Context, d Docker, opts Options) (*Result, error) {
	start := time.Now()
	if err := hostprog.Ensure(ctx, opts.Out, append(hostprog.Needs(hostprog.Cluster), hostprog.NeedsFiles(hostprog.Cluster)...)...); err != nil {
		return nil, err
	}
	v := opts.Versions
	if v.Kubernetes == "" {
		v = DefaultVersions()
	}
	root := opts.CacheDir
	if root == "" {
		root = cache.Dir()
	}
	q := host.Detect()
	if opts.Quirks != nil {
		q = *opts.Quirks
	}
	b := &build{ctx: ctx, d: d, v: v, root: root, q: q, out: status.New(opts.Out), res: &Result{Kubernetes: v.Kubernetes}}
	for _, step := range []func() error{
		b.kubernetesBinaries,
		b.kubeadmImages,
		b.startRootfs, // kind's base files, then the node's root filesystem, while Go compiles
		b.componentBinaries,
		b.waitRootfs,
		b.componentImages,
		b.nodeImage,
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.res.Took = time.Since(start)
	return b.res, nil
}

// build is what the steps of Build share.
type build struct {
	ctx  context.Context
	d    Docker
	v    Versions
	root string // the cache directory
	q    host.Quirks
	out  *status.Printer // each step announced as it starts and marked as it ends; what steps print
	res  *Result

	mu         sync.Mutex        // steps may run concurrently (the root filesystem with the Go builds)
	comps      []Component       // what kubeadm wants
	binDir     map[string]string // component name => directory with its binary
	rootKey    string            // the root filesystem's cache key
	rootfsDone chan error        // the root filesystem is built (or failed)
}

// step runs fn, the step called name, announced as it starts (on a
// terminal, with its time running) and marked with what it made and how
// long it took as it ends; it records the step. Its error names the step.
func (b *build) step(name string, fn func() (product string, cached bool, err error)) error {
	st := b.out.Start(name)
	t := time.Now()
	product, cached, err := fn()
	if err != nil {
		st.Fail()
		return fmt.Errorf("%s: %w", name, err)
	}
	s := Step{Name: name, Product: product, Cached: cached, Took: time.Since(t)}
	b.mu.Lock()
	b.res.Steps = append(b.res.Steps, s)
	b.mu.Unlock()
	how := "built"
	if cached {
		how = "cached"
	}
	st.Done(how + " " + product)
	return nil
}

// kubernetesBinaries builds kubeadm, kubectl, the control plane and
// kube-proxy from source.
func (b *build) kubernetesBinaries() error {
	ctx, v := b.ctx, b.v
	return b.step("kubernetes binaries "+v.Kubernetes, func() (string, bool, error) {
		path, hit, err := cache.Product(ctx, b.root, "kubernetes", v.Kubernetes, func(tmp string) error {
			mods, err := stagingModules(ctx, v.Kubernetes)
			if err != nil {
				return err
			}
			p, err := kubernetesProgram(v.Kubernetes, mods)
			if err != nil {
				return err
			}
			return p.build(ctx, tmp)
		})
		b.res.KubeBin = filepath.Join(path, "bin")
		return b.res.KubeBin, hit, err
	})
}

// kubeadmImages asks kubeadm which component images it wants; the
// Kubernetes components' binaries are those just built.
func (b *build) kubeadmImages() error {
	err := b.step("kubeadm images list", func() (string, bool, error) { // not cached: it takes milliseconds
		out, err := cmdrun.Command(filepath.Join(b.res.KubeBin, "kubeadm"), "config", "images", "list", "--kubernetes-version", b.v.Kubernetes).Text(b.ctx)
		if err != nil {
			return "", false, err
		}
		b.comps, err = parseComponents(out)
		return strings.Join(strings.Fields(out), " "), false, err
	})
	if err != nil {
		return err
	}
	b.binDir = map[string]string{}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		b.binDir[c] = b.res.KubeBin
	}
	return nil
}

// startRootfs finds kind's base files, then builds the node's root
// filesystem, in the background: debootstrap waits on the network and
// dpkg, so it runs while Go compiles. waitRootfs waits for it.
func (b *build) startRootfs() error {
	ctx, v := b.ctx, b.v
	pause, _ := find(b.comps, "pause")
	b.rootKey = cache.Key(rootfsKey(v, pause.Image, b.q)...)
	b.rootfsDone = make(chan error, 1)
	go func() {
		var kindDir string
		if err := b.step("kind base files "+v.Kind, func() (string, bool, error) {
			dir, err := moduleDir(ctx, "sigs.k8s.io/kind", v.Kind)
			kindDir = dir
			return dir, true, err
		}); err != nil {
			b.rootfsDone <- err
			return
		}
		b.rootfsDone <- b.step("node rootfs "+v.Suite, func() (string, bool, error) {
			path, hit, err := cache.Product(ctx, b.root, "rootfs", b.rootKey, func(tmp string) error {
				return buildRootfs(ctx, v, kindDir, pause.Image, b.q, tmp)
			})
			b.res.RootfsTar = filepath.Join(path, "rootfs.tar")
			return b.res.RootfsTar, hit, err
		})
	}()
	return nil
}

// componentBinaries builds etcd, CoreDNS and pause. When one fails, it
// waits for the root filesystem before returning.
func (b *build) componentBinaries() error {
	for _, name := range []string{"etcd", "coredns", "pause"} {
		c, ok := find(b.comps, name)
		if !ok {
			return fmt.Errorf("kubeadm's image list has no %s", name)
		}
		var prog goProgram
		key := c.Version
		switch name {
		case "etcd":
			prog = etcdProgram(c.Version)
		case "coredns":
			prog = corednsProgram(c.Version)
		case "pause":
			prog, key = pauseProgram(), "svclab-pause-1"
		}
		err := b.step(name+" binary "+c.Version, func() (string, bool, error) {
			path, hit, err := cache.Product(b.ctx, b.root, name, key, func(tmp string) error { return prog.build(b.ctx, tmp) })
			b.binDir[name] = filepath.Join(path, "bin")
			return b.binDir[name], hit, err
		})
		if err != nil {
			<-b.rootfsDone
			return err
		}
	}
	return nil
}

// waitRootfs waits for the root filesystem startRootfs builds.
func (b *build) waitRootfs() error {
	return <-b.rootfsDone
}

// componentImages imports an image for each component kubeadm wants:
// its binary, on the node's root filesystem if it needs tools.
func (b *build) componentImages() error {
	ctx, d, res := b.ctx, b.d, b.res
	for _, c := range b.comps {
		c := c
		res.Images = append(res.Images, c.Image)
		if err := b.step("image "+c.Name, func() (string, bool, error) {
			if imageExists(ctx, d, c.Image) {
				return c.Image, true, nil
			}
			src := filepath.Join(b.binDir[c.Name], c.Binary)
			var layers []layer
			if c.WithTools {
				layers = append(layers, layer{Tar: res.RootfsTar})
			}
			for _, p := range c.filesInImage() {
				layers = append(layers, layer{Path: p, Source: src, Mode: 0o755})
			}
			return c.Image, false, importImage(ctx, d, c.Image, c.importChanges(), layers)
		}); err != nil {
			return err
		}
	}
	return nil
}

// nodeImage builds the node image from the root filesystem, the
// Kubernetes binaries and the component images, and removes older ones.
func (b *build) nodeImage() error {
	ctx, d, v, res := b.ctx, b.d, b.v, b.res
	res.NodeImage = fmt.Sprintf("svclab/kind-node:%s-%s", v.Kubernetes, cache.Key(b.rootKey, v.Kubernetes, strings.Join(res.Images, ","), "node-2"))
	return b.step("node image", func() (string, bool, error) {
		if imageExists(ctx, d, res.NodeImage) {
			return res.NodeImage, true, nil
		}
		if err := buildNodeImage(ctx, d, res.NodeImage, res.RootfsTar, res.KubeBin, v.Kubernetes, res.Images); err != nil {
			return res.NodeImage, false, err
		}
		removeOtherNodeImages(ctx, d, res.NodeImage)
		return res.NodeImage, false, nil
	})
}

// removeOtherNodeImages deletes earlier node images (other keys) that no
// container uses, so that rebuilds do not pile up in Docker's data root.
func removeOtherNodeImages(ctx context.Context, d Docker, keep string) {
	out, err := d.Command("images", "--filter", "reference=svclab/kind-node", "--format", "{{.Repository}}:{{.Tag}}").Text(ctx)
	if err != nil {
		return
	}
	for _, ref := range strings.Fields(out) {
		if ref != keep && !strings.HasSuffix(ref, "-base") {
			d.Command("rmi", ref).Run(ctx) // fails, harmlessly, while a cluster uses it
		}
	}
}
