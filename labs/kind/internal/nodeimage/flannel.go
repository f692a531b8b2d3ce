package nodeimage

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/status"

	"github.com/svclab/svclab/labs/kind/internal/cache"
	"github.com/svclab/svclab/labs/kind/internal/flannel"
)

// FlannelPackages are the Debian packages (with what they depend on) the
// flannel images get from the node's root filesystem: iptables for
// flanneld (--ip-masq and its forward rules run iptables and
// iptables-restore, through the same alternatives as the node's
// kube-proxy), coreutils for the install steps' cp.
var FlannelPackages = []string{"iptables", "coreutils"}

// libcArchive is libc6-dev's static C library, which flanneld's static
// cgo link needs (gcc only recommends libc6-dev).
const libcArchive = "/usr/lib/x86_64-linux-gnu/libc.a"

// recipeLabel is the label of the flannel images holding the key of what
// they were built from; an image of that name without it is someone
// else's (upstream's, pulled into a Docker svclab did not start) and is
// used as it is.
const recipeLabel = "dev.svclab.recipe"

// FlannelResult is what BuildFlannel made.
type FlannelResult struct {
	Images []string // the manifest's two image references
	Steps  []Step
	Took   time.Duration
}

// BuildFlannel builds (or finds) the images kube-flannel.yml names, under
// those names: flanneld and install-conf from flannel's Go module, the
// flannel CNI plugin from containernetworking/plugins v0.9.1, each on the
// userland of FlannelPackages taken from the node's root filesystem
// (rootfsTar, Result.RootfsTar). Binaries and userland are cached like the
// node image's parts.
func BuildFlannel(ctx context.Context, d Docker, rootfsTar string, opts Options) (*FlannelResult, error) {
	start := time.Now()
	if err := hostprog.Ensure(ctx, opts.Out, hostprog.Needs(hostprog.Flannel)...); err != nil {
		return nil, err
	}
	if _, err := os.Stat(libcArchive); err != nil {
		return nil, fmt.Errorf("flanneld links statically against %s: install libc6-dev (apt-get install libc6-dev): %w", libcArchive, err)
	}
	info, err := flannel.Parse(flannel.Manifest())
	if err != nil {
		return nil, err
	}
	root := opts.CacheDir
	if root == "" {
		root = cache.Dir()
	}
	b := &build{ctx: ctx, d: d, root: root, out: status.New(opts.Out), res: &Result{}}
	var flanneld, plugin, userland string
	if err := b.step("flanneld "+flannel.Version, func() (string, bool, error) {
		path, hit, err := cache.Product(ctx, root, "flanneld", flannel.Version+"-"+cache.Key(flanneldProgram().goMod(), "cgo-static-1"), func(tmp string) error {
			return flanneldProgram().build(ctx, tmp)
		})
		flanneld = filepath.Join(path, "bin")
		return flanneld, hit, err
	}); err != nil {
		return nil, err
	}
	if err := b.step("flannel CNI plugin "+flannel.PluginVersion, func() (string, bool, error) {
		path, hit, err := cache.Product(ctx, root, "flannel-cni-plugin", flannel.PluginVersion, func(tmp string) error {
			return flannelPluginProgram().build(ctx, tmp)
		})
		plugin = filepath.Join(path, "bin")
		return plugin, hit, err
	}); err != nil {
		return nil, err
	}
	// The root filesystem's directory is its cache key.
	userKey := cache.Key(filepath.Base(filepath.Dir(rootfsTar)), strings.Join(FlannelPackages, ","), "userland-1")
	if err := b.step("flannel userland", func() (string, bool, error) {
		path, hit, err := cache.Product(ctx, root, "flannel-userland", userKey, func(tmp string) error {
			pkgs, err := buildUserland(rootfsTar, FlannelPackages, filepath.Join(tmp, "userland.tar"))
			if err == nil {
				fmt.Fprintf(b.out, "flannel userland: %s\n", strings.Join(pkgs, " "))
			}
			return err
		})
		userland = filepath.Join(path, "userland.tar")
		return userland, hit, err
	}); err != nil {
		return nil, err
	}
	for _, img := range flannelImages(info, flanneld, plugin, userland, userKey) {
		if err := b.step("image "+img.ref, func() (string, bool, error) {
			cached, err := img.build(ctx, d, b.out)
			return img.ref, cached, err
		}); err != nil {
			return nil, err
		}
	}
	return &FlannelResult{Images: []string{info.FlannelImage, info.PluginImage}, Steps: b.res.Steps, Took: time.Since(start)}, nil
}

// flannelImage is one of the two images.
type flannelImage struct {
	ref     string
	key     string // the recipe: what it is made of
	changes []string
	layers  []layer
}

// flannelImages are the two images: flanneld's (upstream's places:
// /opt/bin/flanneld, /opt/bin/install-conf, entrypoint flanneld) and the
// CNI plugin's (/flannel).
func flannelImages(info flannel.Info, flanneldDir, pluginDir, userland, userKey string) []flannelImage {
	path := "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	fkey := cache.Key(info.FlannelImage, flanneldDir, userKey, "flannel-image-1")
	pkey := cache.Key(info.PluginImage, pluginDir, userKey, "plugin-image-1")
	return []flannelImage{
		{
			ref: info.FlannelImage, key: fkey,
			changes: []string{path, `ENTRYPOINT ["/opt/bin/flanneld"]`, "LABEL " + recipeLabel + "=" + fkey,
				"LABEL dev.svclab.built-from=" + flannel.Module + "@" + flannel.Version},
			layers: []layer{{Tar: userland},
				{Path: "/opt/bin/flanneld", Source: filepath.Join(flanneldDir, "flanneld"), Mode: 0o755},
				{Path: "/opt/bin/install-conf", Source: filepath.Join(flanneldDir, "install-conf"), Mode: 0o755}},
		},
		{
			ref: info.PluginImage, key: pkey,
			changes: []string{path, "LABEL " + recipeLabel + "=" + pkey,
				"LABEL dev.svclab.built-from=" + flannel.PluginPackage + "@" + flannel.PluginVersion},
			layers: []layer{{Tar: userland}, {Path: "/flannel", Source: filepath.Join(pluginDir, "flannel"), Mode: 0o755}},
		},
	}
}

// build imports the image unless the daemon has it: built from this very
// recipe, or someone else's under that name (no recipe label). cached
// reports that nothing was built.
func (img flannelImage) build(ctx context.Context, d Docker, out io.Writer) (cached bool, err error) {
	if imageExists(ctx, d, img.ref) {
		have, _ := d.Command("image", "inspect", "--format", fmt.Sprintf(`{{index .Config.Labels %q}}`, recipeLabel), img.ref).Text(ctx)
		switch strings.TrimSpace(have) {
		case img.key:
			return true, nil
		case "", "<no value>":
			if out != nil {
				fmt.Fprintf(out, "using %s as the daemon has it (not built by svclab)\n", img.ref)
			}
			return true, nil
		}
	}
	if err := importImage(ctx, d, img.ref, img.changes, img.layers); err != nil {
		return false, err
	}
	d.Command("image", "prune", "-f").Run(ctx) // the image this one replaced, now untagged
	return false, nil
}
