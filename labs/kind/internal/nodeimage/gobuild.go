package nodeimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/svclab/svclab/internal/cmdrun"
)

// goProgram is a set of main packages built from one throwaway module that
// requires Module@Version (with Replace directives when the module needs
// them), or from Source when the module is ours (the pause program).
type goProgram struct {
	Module   string            // e.g. k8s.io/kubernetes
	Version  string            // e.g. v1.36.4
	Replace  map[string]string // module => version
	Packages []string          // main packages, e.g. k8s.io/kubernetes/cmd/kubeadm
	LDFlags  string
	Source   map[string]string // file name → content, for a module of our own
	// Rename maps go build's binary names to the names the images use.
	Rename map[string]string
	// CGO builds with cgo, linked statically (flanneld's UDP backend is C
	// on amd64, as upstream builds it).
	CGO bool
}

// kubernetesProgram: kubeadm, kubelet, the control plane, kube-proxy and
// kubectl from k8s.io/kubernetes, with the staging modules replaced by
// their published versions and the version variables set like upstream's
// build does (kubeadm and kind read them).
func kubernetesProgram(version string, stagingModules []string) (goProgram, error) {
	staging, err := stagingVersion(version)
	if err != nil {
		return goProgram{}, err
	}
	replace := map[string]string{}
	for _, m := range stagingModules {
		replace[m] = staging
	}
	var ld []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ld = append(ld,
			"-X", pkg+".gitVersion="+version,
			"-X", pkg+".gitMajor=1",
			"-X", pkg+".gitMinor="+minorOf(version),
			"-X", pkg+".gitTreeState=clean",
			"-X", pkg+".gitCommit=0000000000000000000000000000000000000000",
			"-X", pkg+".buildDate=1970-01-01T00:00:00Z")
	}
	var pkgs []string
	for _, c := range []string{"kubeadm", "kubelet", "kubectl", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		pkgs = append(pkgs, "k8s.io/kubernetes/cmd/"+c)
	}
	return goProgram{Module: "k8s.io/kubernetes", Version: version, Replace: replace, Packages: pkgs, LDFlags: strings.Join(ld, " ")}, nil
}

// etcdProgram is the etcd server (go.etcd.io/etcd/server/v3 is a main
// package).
func etcdProgram(version string) goProgram {
	// go build names the binary after the element before /v3: "server".
	return goProgram{Module: "go.etcd.io/etcd/server/v3", Version: version, Packages: []string{"go.etcd.io/etcd/server/v3"}, Rename: map[string]string{"server": "etcd"}}
}

// corednsProgram is CoreDNS with its default plugin set.
func corednsProgram(version string) goProgram {
	return goProgram{Module: "github.com/coredns/coredns", Version: version, Packages: []string{"github.com/coredns/coredns"}}
}

// pauseProgram is the pod sandbox's process: it sleeps, reaps orphans and
// exits on SIGINT/SIGTERM, like kubernetes' build/pause/linux/pause.c.
func pauseProgram() goProgram {
	return goProgram{Module: "svclab.local/pause", Packages: []string{"svclab.local/pause"}, Source: map[string]string{"main.go": pauseSource}}
}

const pauseSource = `package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		os.Stderr.WriteString("Warning: pause should be the first process\n")
	}
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s == syscall.SIGCHLD {
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
`

// goMod renders the throwaway module's go.mod.
func (p goProgram) goMod() string {
	var b strings.Builder
	fmt.Fprintf(&b, "module svclab.local/build\n\ngo 1.26.0\n")
	if p.Source != nil {
		b.Reset()
		fmt.Fprintf(&b, "module %s\n\ngo 1.26.0\n", p.Module)
		return b.String()
	}
	fmt.Fprintf(&b, "\nrequire %s %s\n", p.Module, p.Version)
	if len(p.Replace) > 0 {
		mods := make([]string, 0, len(p.Replace))
		for m := range p.Replace {
			mods = append(mods, m)
		}
		sort.Strings(mods)
		b.WriteString("\nreplace (\n")
		for _, m := range mods {
			fmt.Fprintf(&b, "\t%s => %s %s\n", m, m, p.Replace[m])
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// buildCommand is the go build invocation writing every binary into out.
func (p goProgram) buildCommand(goBin, out string) []string {
	args := []string{goBin, "build", "-mod=mod", "-trimpath", "-o", out + "/"}
	ld := "-s -w"
	if p.LDFlags != "" {
		ld += " " + p.LDFlags
	}
	if p.CGO {
		ld += " -extldflags=-static"
	}
	args = append(args, "-ldflags", ld)
	return append(args, p.Packages...)
}

// buildEnv is the environment of the build: static binaries (without cgo
// unless the program needs it), no toolchain download, no VCS stamping.
func (p goProgram) buildEnv() []string {
	cgo := "CGO_ENABLED=0"
	if p.CGO {
		cgo = "CGO_ENABLED=1"
	}
	return []string{cgo, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off"}
}

// goBinary finds the go command: $GO, go on PATH, or Go's installer's place.
func goBinary() (string, error) {
	if g := os.Getenv("GO"); g != "" {
		return g, nil
	}
	if g, err := exec.LookPath("go"); err == nil {
		return g, nil
	}
	for _, g := range []string{"/usr/local/go/bin/go", "/usr/lib/go/bin/go"} {
		if _, err := os.Stat(g); err == nil {
			return g, nil
		}
	}
	return "", fmt.Errorf("no go command found (PATH, /usr/local/go/bin/go): the build compiles Kubernetes from its Go module")
}

// build compiles the program into dir/bin, using dir/src as the module.
func (p goProgram) build(ctx context.Context, dir string) error {
	goBin, err := goBinary()
	if err != nil {
		return err
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(p.goMod()), 0o644); err != nil {
		return err
	}
	for name, content := range p.Source {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	if err := cmdrun.Command(p.buildCommand(goBin, bin)...).WithDir(src).WithEnv(p.buildEnv()...).Run(ctx); err != nil {
		return err
	}
	for from, to := range p.Rename {
		if err := os.Rename(filepath.Join(bin, from), filepath.Join(bin, to)); err != nil {
			return err
		}
	}
	return os.RemoveAll(src)
}

// stagingModules reads the replace directives of k8s.io/kubernetes's own
// go.mod (its staging modules, replaced there by ./staging/src/… paths).
func stagingModules(ctx context.Context, version string) ([]string, error) {
	goBin, err := goBinary()
	if err != nil {
		return nil, err
	}
	out, err := cmdrun.Command(goBin, "mod", "download", "-json", "k8s.io/kubernetes@"+version).WithEnv("GOTOOLCHAIN=local", "GOFLAGS=").Output(ctx)
	if err != nil {
		return nil, err
	}
	gomod, err := jsonField(out, "GoMod")
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return nil, err
	}
	return parseStagingReplaces(string(data)), nil
}

// parseStagingReplaces returns the modules replaced by ./staging paths.
func parseStagingReplaces(gomod string) []string {
	var mods []string
	for _, line := range strings.Split(gomod, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "replace" {
			f = f[1:]
		}
		if len(f) == 3 && f[1] == "=>" && strings.HasPrefix(f[2], "./staging/") {
			mods = append(mods, f[0])
		}
	}
	return mods
}
