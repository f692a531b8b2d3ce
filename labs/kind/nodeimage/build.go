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

	"github.com/svclab/svclab/labs/kind/cache"
	"github.com/svclab/svclab/labs/kind/cmdrun"
	"github.com/svclab/svclab/labs/kind/host"
)

// Options configure Build.
type Options struct {
	Versions Versions     // zero value: DefaultVersions()
	CacheDir string       // default cache.Dir()
	Out      io.Writer    // progress, one line per step; nil: quiet
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
	if err := hostprog.Ensure(ctx, opts.Out, hostprog.Needs(hostprog.Cluster)...); err != nil {
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
	res := &Result{Kubernetes: v.Kubernetes}
	var mu sync.Mutex // steps may run concurrently (the root filesystem with the Go builds)
	step := func(name string, fn func() (product string, cached bool, err error)) error {
		t := time.Now()
		product, cached, err := fn()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s := Step{Name: name, Product: product, Cached: cached, Took: time.Since(t)}
		mu.Lock()
		defer mu.Unlock()
		res.Steps = append(res.Steps, s)
		if opts.Out != nil {
			how := "built"
			if cached {
				how = "cached"
			}
			fmt.Fprintf(opts.Out, "%-28s %-6s %8s  %s\n", name, how, s.Took.Round(10*time.Millisecond), product)
		}
		return nil
	}

	// 1. Kubernetes.
	err := step("kubernetes binaries "+v.Kubernetes, func() (string, bool, error) {
		path, hit, err := cache.Product(ctx, root, "kubernetes", v.Kubernetes, func(tmp string) error {
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
		res.KubeBin = filepath.Join(path, "bin")
		return res.KubeBin, hit, err
	})
	if err != nil {
		return nil, err
	}

	// 2. What kubeadm wants.
	var comps []Component
	err = step("kubeadm images list", func() (string, bool, error) { // not cached: it takes milliseconds
		out, err := cmdrun.Command(filepath.Join(res.KubeBin, "kubeadm"), "config", "images", "list", "--kubernetes-version", v.Kubernetes).Text(ctx)
		if err != nil {
			return "", false, err
		}
		comps, err = parseComponents(out)
		return strings.Join(strings.Fields(out), " "), false, err
	})
	if err != nil {
		return nil, err
	}
	binDir := map[string]string{}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		binDir[c] = res.KubeBin
	}

	// 4. kind's base files, 5. the node's root filesystem: debootstrap
	// waits on the network and dpkg, so it runs while Go compiles.
	pause, _ := find(comps, "pause")
	rootKey := cache.Key(rootfsKey(v, pause.Image, q)...)
	rootfsDone := make(chan error, 1)
	go func() {
		var kindDir string
		if err := step("kind base files "+v.Kind, func() (string, bool, error) {
			dir, err := moduleDir(ctx, "sigs.k8s.io/kind", v.Kind)
			kindDir = dir
			return dir, true, err
		}); err != nil {
			rootfsDone <- err
			return
		}
		rootfsDone <- step("node rootfs "+v.Suite, func() (string, bool, error) {
			path, hit, err := cache.Product(ctx, root, "rootfs", rootKey, func(tmp string) error {
				return buildRootfs(ctx, v, kindDir, pause.Image, q, tmp)
			})
			res.RootfsTar = filepath.Join(path, "rootfs.tar")
			return res.RootfsTar, hit, err
		})
	}()

	// 3. etcd, CoreDNS, pause.
	for _, name := range []string{"etcd", "coredns", "pause"} {
		c, ok := find(comps, name)
		if !ok {
			return nil, fmt.Errorf("kubeadm's image list has no %s", name)
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
		err = step(name+" binary "+c.Version, func() (string, bool, error) {
			path, hit, err := cache.Product(ctx, root, name, key, func(tmp string) error { return prog.build(ctx, tmp) })
			binDir[name] = filepath.Join(path, "bin")
			return binDir[name], hit, err
		})
		if err != nil {
			<-rootfsDone
			return nil, err
		}
	}
	if err := <-rootfsDone; err != nil {
		return nil, err
	}

	// 6. Component images.
	for _, c := range comps {
		c := c
		res.Images = append(res.Images, c.Image)
		if err := step("image "+c.Name, func() (string, bool, error) {
			if imageExists(ctx, d, c.Image) {
				return c.Image, true, nil
			}
			src := filepath.Join(binDir[c.Name], c.Binary)
			var layers []layer
			if c.WithTools {
				layers = append(layers, layer{Tar: res.RootfsTar})
			}
			for _, p := range c.filesInImage() {
				layers = append(layers, layer{Path: p, Source: src, Mode: 0o755})
			}
			return c.Image, false, importImage(ctx, d, c.Image, c.importChanges(), layers)
		}); err != nil {
			return nil, err
		}
	}

	// 7. The node image.
	res.NodeImage = fmt.Sprintf("svclab/kind-node:%s-%s", v.Kubernetes, cache.Key(rootKey, v.Kubernetes, strings.Join(res.Images, ","), "node-2"))
	if err := step("node image", func() (string, bool, error) {
		if imageExists(ctx, d, res.NodeImage) {
			return res.NodeImage, true, nil
		}
		if err := buildNodeImage(ctx, d, res.NodeImage, res.RootfsTar, res.KubeBin, v.Kubernetes, res.Images); err != nil {
			return res.NodeImage, false, err
		}
		removeOtherNodeImages(ctx, d, res.NodeImage)
		return res.NodeImage, false, nil
	}); err != nil {
		return nil, err
	}
	res.Took = time.Since(start)
	return res, nil
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
