package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/cmdrun"
	"github.com/svclab/svclab/internal/status"
)

// buildFormat changes whenever what a build contains changes for the same
// packages (finishRoot), so that old caches are rebuilt.
const buildFormat = "svclab-vm-rootfs-2"

// recipe says what a build is made from besides the package versions: the
// format and the package names asked for. A cached build of another recipe
// is not used.
func recipe() string {
	return buildFormat + "\n" + KernelPackage + " " + strings.Join(GuestPackages, " ") + "\n"
}

// aptLists is where apt keeps the package lists; when it changed after a
// build's versions were checked, they are checked again.
var aptLists = "/var/lib/apt/lists"

// Image is a built guest: its kernel and root filesystem, made from Debian
// packages and cached under CacheDir.
type Image struct {
	Dir           string        // the build's directory in the cache
	Kernel        string        // the kernel: vmlinux (uncompressed, booted by its PVH entry), else vmlinuz
	Root          string        // the root filesystem, shared read-only with the guest
	KernelVersion string        // as `uname -r` says in the guest: 6.1.0-NN-amd64
	Packages      []string      // NAME=VERSION of every package in Root, the kernel's included
	Built         bool          // made by this Prepare; false when reused from the cache
	Took          time.Duration // how long Prepare took
}

// PrepareOptions tune Prepare.
type PrepareOptions struct {
	CacheDir string    // default CacheDir()
	Log      io.Writer // progress; nil for none
	// Refresh checks the package versions with apt even when the package
	// lists did not change since the cached build was made.
	Refresh bool
}

// CacheDir is where the VM's builds are kept: $SVCLAB_VM_CACHE, else
// $XDG_CACHE_HOME/svclab/vm, else /var/cache/svclab/vm for root and
// ~/.cache/svclab/vm for others.
func CacheDir() string {
	if d := os.Getenv("SVCLAB_VM_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "svclab", "vm")
	}
	if os.Geteuid() == 0 {
		return "/var/cache/svclab/vm"
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache", "svclab", "vm")
	}
	return filepath.Join(os.TempDir(), "svclab-vm-cache")
}

// Prepare makes sure a build of the guest for the current Debian package
// versions is in the cache and returns it. A warm cache costs a few stats:
// the versions are checked with apt (about 2 s) only when the package lists
// changed since (or when Refresh). A build (about half a minute: download,
// unpack, depmod) is made under a lock, in a temporary directory renamed
// into place when complete, so concurrent and interrupted runs are safe.
// When the versions cannot be checked (no apt, no lists) the cached build
// is used as it is.
func Prepare(ctx context.Context, opts PrepareOptions) (*Image, error) {
	start := time.Now()
	dir := opts.CacheDir
	if dir == "" {
		dir = CacheDir()
	}
	progress := status.New(opts.Log) // each long step announced as it starts; nil Log: quiet
	logf := func(format string, args ...any) { fmt.Fprintf(progress, format+"\n", args...) }
	if err := os.MkdirAll(filepath.Join(dir, "builds"), 0o755); err != nil {
		return nil, fmt.Errorf("vm cache: %w", err)
	}
	done := func(img *Image) (*Image, error) {
		img.Took = time.Since(start)
		return img, nil
	}
	if img, err := currentImage(dir); err == nil && !opts.Refresh && !listsChangedSince(img) {
		return done(img)
	}
	lock, err := lockFile(ctx, filepath.Join(dir, "build.lock"), true)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	cur, curErr := currentImage(dir)
	if curErr == nil && !opts.Refresh && !listsChangedSince(cur) {
		return done(cur) // built by another process while we waited
	}

	var kernel pkg
	var pkgs []pkg
	resolve := func() (err error) {
		kernel, pkgs, err = resolveAll(ctx, dir)
		return err
	}
	err = progress.Run("resolve the guest's Debian packages with apt", resolve)
	if err != nil && os.Geteuid() == 0 && curErr != nil {
		// A machine whose package lists were never fetched (or were cleaned).
		logf("the package lists may be missing: %v", firstLine(err.Error()))
		if uerr := progress.Run("update the package lists (apt-get update)", func() error {
			return cmdrun.Command("apt-get", "update", "-q", "-o", "DPkg::Lock::Timeout=120").WithEnv(aptEnv...).Run(ctx)
		}); uerr == nil {
			err = progress.Run("resolve the guest's Debian packages again", resolve)
		}
	}
	if err != nil {
		if curErr == nil {
			logf("could not check the package versions, using the cached build %s: %v", cur.Dir, err)
			return done(cur)
		}
		return nil, fmt.Errorf("vm image: %w", err)
	}
	pkgs = append(pkgs, kernel)
	key := buildKey(kernel, pkgs)
	buildDir := filepath.Join(dir, "builds", key)
	if img, err := loadImage(buildDir); err == nil {
		touch(filepath.Join(buildDir, "resolved"))
		if err := setCurrent(dir, key); err != nil {
			return nil, err
		}
		logf("cached build %s is current", key)
		return done(img)
	}
	if err := build(ctx, dir, key, pkgs, progress); err != nil {
		return nil, err
	}
	if err := setCurrent(dir, key); err != nil {
		return nil, err
	}
	prune(dir, key, logf)
	img, err := loadImage(buildDir)
	if err != nil {
		return nil, err
	}
	img.Built = true
	return done(img)
}

// resolveAll resolves the kernel package and the guest's packages.
func resolveAll(ctx context.Context, tmp string) (pkg, []pkg, error) {
	kernel, err := resolveKernel(ctx, tmp)
	if err != nil {
		return pkg{}, nil, err
	}
	pkgs, err := resolvePackages(ctx, tmp, GuestPackages...)
	return kernel, pkgs, err
}

// buildKey names a build: the kernel version, then a hash of every package
// version and of the build format.
func buildKey(kernel pkg, pkgs []pkg) string {
	h := sha256.New()
	fmt.Fprint(h, recipe())
	for _, p := range pkgs {
		fmt.Fprintln(h, p.String())
	}
	return strings.TrimPrefix(kernel.Name, "linux-image-") + "-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// build downloads and unpacks pkgs into DIR/tmp-KEY-*, finishes the tree and
// renames it to DIR/builds/KEY, each phase a step announced on progress.
// Stale temporary directories of interrupted builds are removed first (the
// caller holds the build lock).
func build(ctx context.Context, dir, key string, pkgs []pkg, progress *status.Printer) error {
	logf := func(format string, args ...any) { fmt.Fprintf(progress, format+"\n", args...) }
	stale, _ := filepath.Glob(filepath.Join(dir, "tmp-*"))
	for _, s := range stale {
		os.RemoveAll(s)
	}
	t0 := time.Now()
	tmp, err := os.MkdirTemp(dir, "tmp-"+key+"-")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	debs, root := filepath.Join(tmp, "debs"), filepath.Join(tmp, "root")
	for _, d := range []string{debs, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := progress.Run(fmt.Sprintf("download %d Debian packages (apt-get download)", len(pkgs)), func() error {
		return downloadPackages(ctx, debs, pkgs)
	}); err != nil {
		return fmt.Errorf("vm image: %w", err)
	}
	t1 := time.Now()
	if err := progress.Run("unpack them (dpkg-deb -x) into "+root, func() error {
		return unpackDebs(ctx, debs, root)
	}); err != nil {
		return fmt.Errorf("vm image: %w", err)
	}
	t2 := time.Now()
	var version string
	if err := progress.Run("finish the root filesystem (depmod, links)", func() (err error) {
		version, err = finishRoot(ctx, root)
		return err
	}); err != nil {
		return fmt.Errorf("vm image: %w", err)
	}
	t3 := time.Now()
	if err := progress.Run("uncompress the kernel", func() error {
		return extractVmlinux(ctx, filepath.Join(root, "boot", "vmlinuz-"+version), filepath.Join(tmp, "vmlinux"))
	}); err != nil {
		logf("booting the compressed kernel (slower under TCG): %v", err)
	}
	t4 := time.Now()
	if err := os.RemoveAll(debs); err != nil {
		return err
	}
	var lines []string
	for _, p := range pkgs {
		lines = append(lines, p.String())
	}
	files := map[string]string{
		"packages":       strings.Join(lines, "\n") + "\n",
		"kernel-version": version + "\n",
		"resolved":       "",
		"inuse":          "",
		"recipe":         recipe(),
		"complete":       time.Now().UTC().Format(time.RFC3339) + "\n",
	}
	for _, name := range []string{"packages", "kernel-version", "recipe", "resolved", "inuse", "complete"} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(files[name]), 0o644); err != nil {
			return err
		}
	}
	final := filepath.Join(dir, "builds", key)
	os.RemoveAll(final) // an incomplete leftover
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	ok = true
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	logf("built %s in %s (download %s, unpack %s, depmod and links %s, uncompress the kernel %s), %d MiB",
		key, r(time.Since(t0)), r(t1.Sub(t0)), r(t2.Sub(t1)), r(t3.Sub(t2)), r(t4.Sub(t3)), dirSize(final)>>20)
	return nil
}

// loadImage reads a complete build.
func loadImage(buildDir string) (*Image, error) {
	if !exists(filepath.Join(buildDir, "complete")) {
		return nil, fmt.Errorf("no complete vm build in %s", buildDir)
	}
	if r, err := os.ReadFile(filepath.Join(buildDir, "recipe")); err != nil || string(r) != recipe() {
		return nil, fmt.Errorf("vm build %s is of another recipe (format or packages)", buildDir)
	}
	v, err := os.ReadFile(filepath.Join(buildDir, "kernel-version"))
	if err != nil {
		return nil, err
	}
	p, err := os.ReadFile(filepath.Join(buildDir, "packages"))
	if err != nil {
		return nil, err
	}
	version := strings.TrimSpace(string(v))
	img := &Image{
		Dir:           buildDir,
		Root:          filepath.Join(buildDir, "root"),
		KernelVersion: version,
		Kernel:        filepath.Join(buildDir, "root", "boot", "vmlinuz-"+version),
		Packages:      strings.Fields(string(p)),
	}
	if vmlinux := filepath.Join(buildDir, "vmlinux"); exists(vmlinux) {
		img.Kernel = vmlinux
	}
	if !exists(img.Kernel) {
		return nil, fmt.Errorf("vm build %s: no kernel %s", buildDir, img.Kernel)
	}
	return img, nil
}

// currentImage is the build DIR/current names.
func currentImage(dir string) (*Image, error) {
	key, err := os.ReadFile(filepath.Join(dir, "current"))
	if err != nil {
		return nil, err
	}
	k := filepath.Base(strings.TrimSpace(string(key)))
	if k == "." || k == "/" || k == ".." {
		return nil, errors.New("vm cache: empty current")
	}
	return loadImage(filepath.Join(dir, "builds", k))
}

func setCurrent(dir, key string) error {
	tmp := filepath.Join(dir, ".current.tmp")
	if err := os.WriteFile(tmp, []byte(key+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "current"))
}

// listsChangedSince tells whether apt's package lists changed (apt-get
// update) after img's package versions were last checked.
func listsChangedSince(img *Image) bool {
	lists, err := os.Stat(aptLists)
	if err != nil {
		return false
	}
	checked, err := os.Stat(filepath.Join(img.Dir, "resolved"))
	if err != nil {
		return true
	}
	return lists.ModTime().After(checked.ModTime())
}

func touch(p string) {
	now := time.Now()
	if err := os.Chtimes(p, now, now); err != nil {
		os.WriteFile(p, nil, 0o644)
	}
}

// prune deletes the builds other than keep that no run uses (a run holds a
// shared lock on the build's inuse file).
func prune(dir, keep string, logf func(string, ...any)) {
	builds, _ := filepath.Glob(filepath.Join(dir, "builds", "*"))
	for _, b := range builds {
		if filepath.Base(b) == keep {
			continue
		}
		l, ok := tryLockFile(filepath.Join(b, "inuse"))
		if !ok && exists(filepath.Join(b, "inuse")) {
			continue // in use: the next prune gets it
		}
		trash := filepath.Join(dir, "tmp-trash-"+filepath.Base(b))
		if os.Rename(b, trash) == nil {
			os.RemoveAll(trash)
			logf("removed the old build %s", filepath.Base(b))
		}
		l.Unlock()
	}
}

// useImage prepares the image and takes a shared lock on it, so that no
// prune deletes it while a VM runs from it.
func useImage(ctx context.Context, opts PrepareOptions) (*Image, *fileLock, error) {
	for attempt := 0; ; attempt++ {
		img, err := Prepare(ctx, opts)
		if err != nil {
			return nil, nil, err
		}
		l, err := lockFile(ctx, filepath.Join(img.Dir, "inuse"), false)
		if err == nil && exists(filepath.Join(img.Dir, "complete")) {
			return img, l, nil
		}
		l.Unlock()
		if attempt == 2 {
			return nil, nil, fmt.Errorf("vm build %s vanished while starting: %v", img.Dir, err)
		}
	}
}
