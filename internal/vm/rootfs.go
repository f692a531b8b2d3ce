package vm

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/svclab/svclab/internal/cmdrun"
)

// guestPath is the PATH of commands in the guest. /usr/local/bin holds the
// link to the shared svclab binary.
const guestPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// alternatives are the links update-alternatives would make from the
// packages' maintainer scripts, which unpacking does not run; the choices are
// Debian's defaults (iptables is the nft variant; iptables-legacy is there
// by its own name). Link path → target in the same directory.
var alternatives = map[string]string{
	"usr/bin/awk": "mawk",
}

func init() {
	for _, t := range []string{"iptables", "ip6tables", "arptables", "ebtables"} {
		for _, s := range []string{"", "-save", "-restore"} {
			alternatives["usr/sbin/"+t+s] = t + "-nft" + s
		}
	}
}

// unpackDebs extracts each .deb of dir into root, a few at a time, the
// largest (the kernel) first. CLI: dpkg-deb -x DEB ROOT
func unpackDebs(ctx context.Context, dir, root string) error {
	debs, err := filepath.Glob(filepath.Join(dir, "*.deb"))
	if err != nil {
		return err
	}
	if len(debs) == 0 {
		return fmt.Errorf("no .deb in %s", dir)
	}
	size := func(p string) int64 {
		info, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return info.Size()
	}
	sort.Slice(debs, func(i, j int) bool { return size(debs[i]) > size(debs[j]) })
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan string)
	errs := make(chan error, len(debs))
	var wg sync.WaitGroup
	for range min(4, max(2, runtime.NumCPU())) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				if err := cmdrun.Command("dpkg-deb", "-x", d, root).WithEnv(aptEnv...).Run(ctx); err != nil {
					errs <- err
					cancel()
				}
			}
		}()
	}
	for _, d := range debs {
		if ctx.Err() != nil {
			break
		}
		work <- d
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// finishRoot does what unpacked packages miss to be a usable system: the
// alternatives links, a busybox applet link for every command no package
// provides, the few /etc files a login would have, and modules.dep for the
// kernel's modules. It returns the kernel version (the one directory in
// /lib/modules).
func finishRoot(ctx context.Context, root string) (string, error) {
	for link, target := range alternatives {
		l := filepath.Join(root, link)
		if exists(l) || !exists(filepath.Join(filepath.Dir(l), target)) {
			continue
		}
		if err := os.Symlink(target, l); err != nil {
			return "", err
		}
	}
	if err := linkApplets(ctx, root); err != nil {
		return "", err
	}
	if err := writeEtc(root); err != nil {
		return "", err
	}
	for _, d := range []string{"usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale"} {
		os.RemoveAll(filepath.Join(root, d))
	}
	for _, d := range []string{"root", "tmp", "run", "proc", "sys", "dev", "var/tmp", "usr/local/bin", "usr/local/sbin", "opt/svclab/bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return "", err
		}
	}
	mods, err := filepath.Glob(filepath.Join(root, "lib/modules/*"))
	if err != nil || len(mods) != 1 {
		return "", fmt.Errorf("want one kernel in %s/lib/modules, found %v", root, mods)
	}
	version := filepath.Base(mods[0])
	if !exists(filepath.Join(root, "boot", "vmlinuz-"+version)) {
		return "", fmt.Errorf("no kernel %s/boot/vmlinuz-%s", root, version)
	}
	return version, depmod(ctx, root, version)
}

// linkApplets links the busybox applets whose command no package provides
// (sh, vi, nc, ping, less…) to /bin/busybox.
// CLI: busybox --list-full, then ln -s /bin/busybox for each missing one.
func linkApplets(ctx context.Context, root string) error {
	out, err := cmdrun.Command(filepath.Join(root, "bin/busybox"), "--list-full").WithEnv(aptEnv...).Output(ctx)
	if err != nil {
		return err
	}
	dirs := strings.Split(strings.TrimPrefix(guestPath, "/"), ":/")
	for _, p := range strings.Fields(string(out)) {
		if !strings.Contains(p, "/") {
			continue
		}
		name := filepath.Base(p)
		found := false
		for _, d := range dirs {
			if _, err := os.Lstat(filepath.Join(root, d, name)); err == nil {
				found = true
				break
			}
		}
		if found {
			continue
		}
		l := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
			return err
		}
		if err := os.Symlink("/bin/busybox", l); err != nil {
			return err
		}
	}
	return nil
}

// etcFiles are the system files no package of the guest brings.
var etcFiles = map[string]string{
	"etc/passwd":        "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	"etc/group":         "root:x:0:\ntty:x:5:\nnogroup:x:65534:\n",
	"etc/shadow":        "root:*:19000:0:99999:7:::\n",
	"etc/hostname":      "svclab-vm\n",
	"etc/hosts":         "127.0.0.1\tlocalhost svclab-vm\n::1\tlocalhost ip6-localhost ip6-loopback\n",
	"etc/nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\nprotocols: files\nservices: files\n",
	"etc/resolv.conf":   "",
	"etc/fstab":         "",
}

func writeEtc(root string) error {
	for name, content := range etcFiles {
		p := filepath.Join(root, name)
		if exists(p) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	mtab := filepath.Join(root, "etc/mtab")
	if _, err := os.Lstat(mtab); err != nil {
		return os.Symlink("../proc/self/mounts", mtab)
	}
	return nil
}

// depmod writes modules.dep, modules.alias… for the guest's kernel, with
// the guest's own kmod run through the guest's dynamic loader (the host need
// not have kmod), or the host's depmod when that fails.
// CLI: ROOT/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path … --argv0 depmod ROOT/bin/kmod -b ROOT VERSION
func depmod(ctx context.Context, root, version string) error {
	var libs []string
	for _, d := range []string{"lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu"} {
		libs = append(libs, filepath.Join(root, d))
	}
	var loader, kmod string
	for _, d := range libs {
		if p := filepath.Join(d, "ld-linux-x86-64.so.2"); exists(p) {
			loader = p
		}
	}
	for _, p := range []string{"bin/kmod", "usr/bin/kmod"} {
		if exists(filepath.Join(root, p)) {
			kmod = filepath.Join(root, p)
		}
	}
	var guestErr error
	if loader != "" && kmod != "" {
		guestErr = cmdrun.Command(loader, "--library-path", strings.Join(libs, ":"), "--argv0", "depmod", kmod, "-b", root, version).WithEnv(aptEnv...).Run(ctx)
		if guestErr == nil {
			return nil
		}
	}
	if p, err := exec.LookPath("depmod"); err == nil {
		return cmdrun.Command(p, "-b", root, version).WithEnv(aptEnv...).Run(ctx)
	}
	if guestErr == nil {
		guestErr = fmt.Errorf("no kmod in %s and no depmod on the host", root)
	}
	return fmt.Errorf("depmod for %s: %w", version, guestErr)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// dirSize is the total size of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
