package nodeimage

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/svclab/svclab/internal/cmdrun"
	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/labs/kind/internal/host"
)

// NodePackages are the Debian packages of the node's root filesystem:
// kind's base image's list, with Debian's containerd, runc and CNI plugins
// instead of kind's own builds, and ipset for kube-proxy's IPVS mode.
var NodePackages = []string{
	"systemd", "systemd-sysv", "dbus",
	"containerd", "runc", "containernetworking-plugins",
	"conntrack", "iptables", "nftables", "ipset", "iproute2", "ethtool",
	"util-linux", "mount", "kmod", "libseccomp2", "pigz",
	"bash", "ca-certificates", "curl", "jq", "procps", "socat", "iputils-ping",
}

// debootstrapArgs is the debootstrap command for the node root filesystem.
// The Release file is checked against Debian's archive keyring, named
// explicitly, and --force-check-gpg makes a missing keyring or signature
// an error: without them debootstrap, finding no keyring (it only
// Recommends debian-archive-keyring), warns "Cannot check Release
// signature" and installs whatever the mirror serves. The signature is what
// protects the packages (the Release file's hashes cover the indices,
// theirs the .debs); https (the default mirror) adds that no one on the
// way sees or replays what is fetched.
func debootstrapArgs(v Versions, dir string) []string {
	return []string{"debootstrap", "--variant=minbase", "--keyring=" + hostprog.DebianArchiveKeyring, "--force-check-gpg",
		"--include=" + strings.Join(NodePackages, ","), v.Suite, dir, v.Mirror}
}

// rootfsKey is the cache key of the root filesystem.
func rootfsKey(v Versions, pauseImage string, q host.Quirks) []string {
	return []string{v.Suite, v.Mirror, strings.Join(NodePackages, ","), v.Kind, pauseImage, q.String(), "rootfs-3"}
}

// buildRootfs makes the node's root filesystem in dir/rootfs and packs it
// into dir/rootfs.tar (what `docker import` reads); the tree is removed.
func buildRootfs(ctx context.Context, v Versions, kindDir, pauseImage string, q host.Quirks, dir string) error {
	root := filepath.Join(dir, "rootfs")
	// In a mount namespace of its own: the /proc and /sys debootstrap
	// mounts in the target go with it, also when it is killed, instead of
	// staying mounted in the cache's build directory.
	if err := cmdrun.Command(append([]string{hostprog.Unshare, "--mount", "--propagation", "private"}, debootstrapArgs(v, root)...)...).Run(ctx); err != nil {
		return err
	}
	if err := customizeRootfs(ctx, root, kindDir, pauseImage, q); err != nil {
		return err
	}
	if err := cmdrun.Command("tar", "--numeric-owner", "--xattrs", "-C", root, "-cf", filepath.Join(dir, "rootfs.tar"), ".").Run(ctx); err != nil {
		return err
	}
	return os.RemoveAll(root)
}

// containerdConfig adapts kind's containerd config: the sandbox image is
// kubeadm's pause image, and on a host without CAP_SYS_RESOURCE runc is the
// svclab-runc wrapper and OOM scores are restricted.
func containerdConfig(config, pauseImage string, q host.Quirks) (string, error) {
	lines := strings.Split(config, "\n")
	found := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "sandbox_image"):
			lines[i] = fmt.Sprintf("  sandbox_image = %q", pauseImage)
			found = true
		case q.NoCapSysResource && strings.HasPrefix(t, "restrict_oom_score_adj"):
			lines[i] = "  restrict_oom_score_adj = true"
		case q.NoCapSysResource && strings.HasPrefix(t, "SystemdCgroup"):
			lines[i] = l + "\n    BinaryName = \"/usr/local/sbin/svclab-runc\""
		}
	}
	if !found {
		return "", fmt.Errorf("kind's containerd config has no sandbox_image line")
	}
	return strings.Join(lines, "\n"), nil
}

// copyKindBaseFiles copies kind's images/base/files tree into root with
// the modes kind's Dockerfile gives them: executables in usr/local/bin and
// kind/bin, everything else 0644.
func copyKindBaseFiles(src, root string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		os.Remove(dst)
		return os.WriteFile(dst, data, mode)
	})
}

const defaultStorageManifest = `# host-path based default storage class (no provisioner image offline)
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
`

func symlink(target, link string) error {
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	os.Remove(link)
	return os.Symlink(target, link)
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

func appendFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
