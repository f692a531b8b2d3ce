package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/svclab/svclab/internal/cmdrun"
	"github.com/svclab/svclab/labs/kind/internal/host"
)

// customizeRootfs does what kind's base image Dockerfile does, on Debian's
// packages, and works around the host's quirks: customizeSteps, in order.
func customizeRootfs(ctx context.Context, root, kindDir, pauseImage string, q host.Quirks) error {
	c := &customization{ctx: ctx, root: root, kindDir: kindDir, pauseImage: pauseImage, quirks: q}
	for _, step := range customizeSteps() {
		if err := step.run(c); err != nil {
			return fmt.Errorf("node image root %s: %s: %w", root, step.name, err)
		}
	}
	return nil
}

// customizeStep is one named step of customizeRootfs.
type customizeStep struct {
	name string
	run  func(*customization) error
}

// customizeSteps are customizeRootfs's steps, in the Dockerfile's order.
func customizeSteps() []customizeStep {
	return []customizeStep{
		{"copy kind's base files", (*customization).copyKindBaseFiles},
		{"link containerd and runc where kind's units expect them", (*customization).linkKindBinaries},
		{"link the CNI plugins into /opt/cni/bin", (*customization).linkCNIPlugins},
		{"remove units, sysctl defaults, docs and caches", (*customization).trim},
		{"keep journald from reading the kernel log", (*customization).journaldNoKMsg},
		{"enable kubelet and containerd", (*customization).enableUnits},
		{"make the manifest directories", (*customization).makeManifestDirs},
		{"write kind's runtime spec", (*customization).writeRuntimeSpec},
		{"write the default storage class", (*customization).writeStorageClass},
		{"adapt containerd's config", (*customization).adaptContainerdConfig},
		{"install svclab-runc", (*customization).installRuncWrapper},
		{"let containerd run without CAP_SYS_RESOURCE", (*customization).containerdOOMScore},
	}
}

// customization is what the steps of customizeRootfs work on.
type customization struct {
	ctx        context.Context
	root       string // the root filesystem debootstrap made
	kindDir    string // kind's source tree
	pauseImage string // kubeadm's pause image, containerd's sandbox image
	quirks     host.Quirks
}

// path is rel inside the root.
func (c *customization) path(rel string) string { return filepath.Join(c.root, rel) }

func (c *customization) copyKindBaseFiles() error {
	return copyKindBaseFiles(filepath.Join(c.kindDir, "images", "base", "files"), c.root)
}

// linkKindBinaries: kind's units expect its own binaries' places.
func (c *customization) linkKindBinaries() error {
	for link, target := range map[string]string{
		"usr/local/bin/containerd":              "/usr/bin/containerd",
		"usr/local/bin/ctr":                     "/usr/bin/ctr",
		"usr/local/bin/containerd-shim-runc-v2": "/usr/bin/containerd-shim-runc-v2",
		"usr/local/sbin/runc":                   "/usr/sbin/runc",
	} {
		if err := symlink(target, c.path(link)); err != nil {
			return err
		}
	}
	return nil
}

// linkCNIPlugins puts Debian's CNI plugins where containerd looks for
// them.
func (c *customization) linkCNIPlugins() error {
	plugins, err := os.ReadDir(c.path("usr/lib/cni"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.path("opt/cni/bin"), 0o755); err != nil {
		return err
	}
	for _, p := range plugins {
		if err := symlink("/usr/lib/cni/"+p.Name(), c.path(filepath.Join("opt/cni/bin", p.Name()))); err != nil {
			return err
		}
	}
	return nil
}

// trimmed are what trim removes: the units a container must not start,
// systemd's sysctl defaults that are not per network namespace (pid_max
// would change the host's sysctls from inside a privileged node), docs
// and package caches.
var trimmed = []string{
	"lib/systemd/system/multi-user.target.wants/*", "etc/systemd/system/*.wants/*",
	"lib/systemd/system/local-fs.target.wants/*", "lib/systemd/system/sockets.target.wants/*udev*",
	"lib/systemd/system/sockets.target.wants/*initctl*", "lib/systemd/system/basic.target.wants/*",
	"lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
	"usr/lib/sysctl.d/50-pid-max.conf",
	"usr/share/doc/*", "usr/share/man/*", "usr/share/locale/*", "var/cache/apt/archives/*.deb", "var/cache/apt/*.bin", "var/lib/apt/lists/*",
}

// trim removes what matches trimmed.
func (c *customization) trim() error {
	for _, glob := range trimmed {
		matches, _ := filepath.Glob(c.path(glob))
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *customization) journaldNoKMsg() error {
	return appendFile(c.path("etc/systemd/journald.conf"), "ReadKMsg=no\n")
}

// enableUnits enables kind's units and masks binfmt (systemctl in the
// root).
func (c *customization) enableUnits() error {
	for _, args := range [][]string{
		{"systemctl", "enable", "kubelet.service", "containerd.service", "undo-mount-hacks.service"},
		{"systemctl", "mask", "systemd-binfmt.service"},
	} {
		if err := cmdrun.Command(append([]string{"chroot", c.root}, args...)...).Run(c.ctx); err != nil {
			return err
		}
	}
	return nil
}

func (c *customization) makeManifestDirs() error {
	for _, d := range []string{"etc/kubernetes/manifests", "kind/manifests"} {
		if err := os.MkdirAll(c.path(d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// writeRuntimeSpec writes kind's runtime spec: ctr's default plus the
// product-files hook, no rlimits.
func (c *customization) writeRuntimeSpec() error {
	spec, err := cmdrun.Command("chroot", c.root, "sh", "-c",
		`ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' | jq 'del(.process.rlimits)'`).Output(c.ctx)
	if err != nil {
		return err
	}
	return os.WriteFile(c.path("etc/containerd/cri-base.json"), spec, 0o644)
}

func (c *customization) writeStorageClass() error {
	return os.WriteFile(c.path("kind/manifests/default-storage.yaml"), []byte(defaultStorageManifest), 0o644)
}

// adaptContainerdConfig: see containerdConfig.
func (c *customization) adaptContainerdConfig() error {
	configPath := c.path("etc/containerd/config.toml")
	config, err := os.ReadFile(configPath)
	if err != nil {
		return err
	}
	patched, err := containerdConfig(string(config), c.pauseImage, c.quirks)
	if err != nil {
		return err
	}
	return os.WriteFile(configPath, []byte(patched), 0o644)
}

func (c *customization) installRuncWrapper() error {
	return os.WriteFile(c.path("usr/local/sbin/svclab-runc"), []byte(host.RuncWrapper), 0o755)
}

// containerdOOMScore: on a host without CAP_SYS_RESOURCE, systemd refuses
// to start a unit whose OOMScoreAdjust it cannot set.
func (c *customization) containerdOOMScore() error {
	if !c.quirks.NoCapSysResource {
		return nil
	}
	return writeFile(c.path("etc/systemd/system/containerd.service.d/10-svclab-oom.conf"),
		"# written by svclab: this host has no CAP_SYS_RESOURCE, negative OOM scores cannot be set\n[Service]\nOOMScoreAdjust=0\n")
}
