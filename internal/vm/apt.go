package vm

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/svclab/svclab/internal/cmdrun"
)

// GuestPackages make the guest's root filesystem (with their dependencies).
// usr-is-merged stands in for usrmerge, which would pull in perl. dash is
// /bin/sh, as on Debian: busybox's sh would run its own applets (ip, ps,
// modprobe…) instead of the real tools.
var GuestPackages = []string{
	"usr-is-merged", "dash", "busybox-static", "bash", "coreutils", "mount", "util-linux", "procps", "kmod",
	"netbase", "iproute2", "iptables", "nftables", "ipset", "ipvsadm", "conntrack", "curl", "tcpdump",
}

// KernelPackage is the metapackage whose kernel the guest boots.
const KernelPackage = "linux-image-amd64"

// pkg is one Debian package at an exact version.
type pkg struct{ Name, Version string }

func (p pkg) String() string { return p.Name + "=" + p.Version }

// instLine matches apt-get's simulation output: "Inst libc6 (2.36-9 Debian:12.11/stable [amd64])",
// also "Inst libc6 [2.36-8] (2.36-9 …)" when a version is installed.
var instLine = regexp.MustCompile(`^Inst (\S+) (?:\[[^]]*\] )?\((\S+)`)

// parseSimulation returns the packages an `apt-get -s install` would install.
func parseSimulation(out string) []pkg {
	var pkgs []pkg
	for _, line := range strings.Split(out, "\n") {
		if m := instLine.FindStringSubmatch(line); m != nil {
			pkgs = append(pkgs, pkg{Name: m[1], Version: m[2]})
		}
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Name < pkgs[j].Name })
	return pkgs
}

// resolvePackages returns names with their whole dependency closure, as if
// installed on an empty system (no Recommends), with the versions apt would
// pick. CLI: apt-get -s -o Dir::State::status=/dev/null install --no-install-recommends NAMES…
// (an empty status file stands in for /dev/null).
func resolvePackages(ctx context.Context, tmp string, names ...string) ([]pkg, error) {
	status, err := os.CreateTemp(tmp, "dpkg-status-")
	if err != nil {
		return nil, err
	}
	status.Close()
	defer os.Remove(status.Name())
	args := append([]string{"apt-get", "-s", "-q", "-o", "Dir::State::status=" + status.Name(),
		"-o", "APT::Install-Recommends=false", "-o", "APT::Install-Suggests=false", "install"}, names...)
	out, err := cmdrun.Command(args...).WithEnv(aptEnv...).Output(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w (run `apt-get update` first if the package lists are missing)", err)
	}
	pkgs := parseSimulation(string(out))
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("apt-get -s install %s: no package to install in its output:\n%s", strings.Join(names, " "), cmdrun.Tail(string(out), 2000))
	}
	return pkgs, nil
}

// resolveKernel returns the versioned kernel package linux-image-amd64
// stands for (linux-image-6.1.0-NN-amd64), without the kernel's own
// dependencies (initramfs-tools and friends), which the VM does not use.
func resolveKernel(ctx context.Context, tmp string) (pkg, error) {
	pkgs, err := resolvePackages(ctx, tmp, KernelPackage)
	if err != nil {
		return pkg{}, err
	}
	for _, p := range pkgs {
		if strings.HasPrefix(p.Name, "linux-image-") && p.Name != KernelPackage && !strings.HasSuffix(p.Name, "-dbg") {
			return p, nil
		}
	}
	return pkg{}, fmt.Errorf("apt-get -s install %s: no linux-image-VERSION package among %v", KernelPackage, pkgs)
}

// downloadPackages fetches the .debs into dir.
// CLI: (cd DIR && apt-get download NAME=VERSION…)
func downloadPackages(ctx context.Context, dir string, pkgs []pkg) error {
	args := []string{"apt-get", "download", "-q"}
	if os.Geteuid() == 0 {
		args = append(args, "-o", "APT::Sandbox::User=root")
	}
	for _, p := range pkgs {
		args = append(args, p.String())
	}
	return cmdrun.Command(args...).WithDir(dir).WithEnv(aptEnv...).Run(ctx)
}

// aptEnv is the environment of the commands that make the image: no
// prompts, and messages untranslated (the errors quote them).
var aptEnv = []string{"DEBIAN_FRONTEND=noninteractive", "LC_ALL=C"}
