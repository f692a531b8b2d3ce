package nodeimage

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/kind/internal/host"
)

// TestCustomizeSteps: customizeRootfs's steps by name, in the order of
// kind's base image Dockerfile.
func TestCustomizeSteps(t *testing.T) {
	var got []string
	for _, s := range customizeSteps() {
		got = append(got, s.name)
	}
	want := []string{
		"copy kind's base files",
		"link containerd and runc where kind's units expect them",
		"link the CNI plugins into /opt/cni/bin",
		"remove units, sysctl defaults, docs and caches",
		"keep journald from reading the kernel log",
		"enable kubelet and containerd",
		"make the manifest directories",
		"write kind's runtime spec",
		"write the default storage class",
		"adapt containerd's config",
		"install svclab-runc",
		"let containerd run without CAP_SYS_RESOURCE",
	}
	if !slices.Equal(got, want) {
		t.Errorf("steps:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestCustomizeFileSteps runs the steps that only change files (not
// those that need kind's tree or run programs in the root) on a small
// fake root, on a host without CAP_SYS_RESOURCE.
func TestCustomizeFileSteps(t *testing.T) {
	root := t.TempDir()
	for path, content := range map[string]string{
		"usr/lib/cni/bridge":                      "",
		"usr/lib/cni/loopback":                    "",
		"usr/lib/sysctl.d/50-pid-max.conf":        "kernel.pid_max = 4194304\n",
		"usr/share/doc/containerd/copyright":      "",
		"etc/systemd/system/getty.target.wants/x": "",
		"etc/systemd/journald.conf":               "[Journal]\n",
		"etc/containerd/config.toml":              "  sandbox_image = \"registry.k8s.io/pause:3.10\"\n",
	} {
		if err := writeFile(filepath.Join(root, path), content); err != nil {
			t.Fatal(err)
		}
	}
	c := &customization{ctx: context.Background(), root: root, pauseImage: "registry.k8s.io/pause:3.10.1", quirks: host.Quirks{NoCapSysResource: true}}
	skip := map[string]bool{"copy kind's base files": true, "enable kubelet and containerd": true, "write kind's runtime spec": true}
	for _, s := range customizeSteps() {
		if !skip[s.name] {
			if err := s.run(c); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
	}
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Error(err)
		}
		return string(data)
	}
	for link, want := range map[string]string{"usr/local/bin/containerd": "/usr/bin/containerd", "usr/local/sbin/runc": "/usr/sbin/runc",
		"opt/cni/bin/bridge": "/usr/lib/cni/bridge", "opt/cni/bin/loopback": "/usr/lib/cni/loopback"} {
		if got, err := os.Readlink(filepath.Join(root, link)); err != nil || got != want {
			t.Errorf("%s → %q, %v; want %s", link, got, err, want)
		}
	}
	for _, gone := range []string{"usr/lib/sysctl.d/50-pid-max.conf", "usr/share/doc/containerd", "etc/systemd/system/getty.target.wants/x"} {
		if _, err := os.Lstat(filepath.Join(root, gone)); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", gone, err)
		}
	}
	if got := read("etc/systemd/journald.conf"); got != "[Journal]\nReadKMsg=no\n" {
		t.Errorf("journald.conf: %q", got)
	}
	if got := read("etc/containerd/config.toml"); !strings.Contains(got, `sandbox_image = "registry.k8s.io/pause:3.10.1"`) {
		t.Errorf("containerd's config: %q", got)
	}
	if got := read("kind/manifests/default-storage.yaml"); got != defaultStorageManifest {
		t.Errorf("storage class: %q", got)
	}
	if fi, err := os.Stat(filepath.Join(root, "usr/local/sbin/svclab-runc")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("svclab-runc: %v, %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "etc/kubernetes/manifests")); err != nil || !fi.IsDir() {
		t.Errorf("etc/kubernetes/manifests: %v", err)
	}
	if got := read("etc/systemd/system/containerd.service.d/10-svclab-oom.conf"); !strings.Contains(got, "OOMScoreAdjust=0") {
		t.Errorf("the OOM drop-in: %q", got)
	}
}
