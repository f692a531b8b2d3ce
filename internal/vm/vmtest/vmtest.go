// Package vmtest runs a package's tests inside svclab's VM, for tests that
// need a kernel feature this machine's kernel lacks (IPVS). The host-side
// test compiles the package's test binary, boots Debian's stock kernel with
// internal/vm, runs the binary there, and fails if it fails — so on a kernel
// without IPVS the IPVS tests still run for real, also under CI.
package vmtest

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/internal/vm"
)

// Options of one in-VM run.
type Options struct {
	// Package is the import path or ./relative directory of the package
	// whose tests run (go test -c builds it from the module root).
	Package string
	// Args are the test binary's arguments (-test.run …, -ginkgo.label-filter …).
	Args []string
	// Timeout bounds the run, boot included (default 10 minutes).
	Timeout time.Duration
	// CPUs is the guest's CPU count (default 1: see guestCPUs).
	CPUs int
}

// guestCPUs is the default guest CPU count of a test's VM. Under TCG every
// guest CPU is a host thread emulating it; go test runs two packages at
// once on a 2-core machine, so a second guest CPU mostly adds context
// switches: a guest script of 10 execs of /bin/true, 5 of iptables-nft-save
// and 5 Go binary starts took 42 s with one CPU and 51 s with two, boot
// included, on an idle 2-core host.
const guestCPUs = 1

// moduleRoot is the directory holding go.mod, found from here.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	t.Fatalf("no go.mod above %s", dir)
	return ""
}

// Run compiles the package's tests, runs them in the VM with opts.Args and
// returns their output; the test fails unless they pass.
func Run(t *testing.T, opts Options) string {
	t.Helper()
	roottest.Require(t, "boots a VM with qemu")
	if os.Getenv("SVCLAB_VM") == "1" {
		t.Skip("already inside svclab's VM")
	}
	if err := hostprog.Ensure(context.Background(), os.Stderr, hostprog.Needs(hostprog.VM)...); err != nil {
		t.Fatalf("installing qemu: %v", err)
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "pkg.test")
	build := exec.Command("go", "test", "-c", "-o", bin, opts.Package)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c %s: %v\n%s", opts.Package, err, out)
	}
	svclab := os.Getenv("SVCLAB_BIN")
	if svclab == "" {
		svclab = filepath.Join(dir, "svclab")
		b := exec.Command("go", "build", "-o", svclab, "./tools/svclab")
		b.Dir = root
		if out, err := b.CombinedOutput(); err != nil {
			t.Fatalf("building svclab: %v\n%s", err, out)
		}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	var out lockedBuffer // stdout, stderr and the log are written concurrently
	start := time.Now()
	code, err := vm.Run(context.Background(), vm.Options{
		Command: append([]string{bin}, opts.Args...),
		Shares: []vm.Share{
			{HostPath: dir, GuestPath: dir, ReadOnly: true},
			{HostPath: root, GuestPath: root, ReadOnly: true},
		},
		Dir:     filepath.Join(root, relDir(opts.Package)),
		Env:     map[string]string{"CI": os.Getenv("CI")},
		Binary:  svclab,
		Timeout: timeout,
		CPUs:    cmp.Or(opts.CPUs, guestCPUs),
		Stdout:  &out,
		Stderr:  &out,
		Log:     &out,
	})
	t.Logf("in the VM (%s, exit %d):\n%s", time.Since(start).Round(time.Second), code, out.String())
	if err != nil {
		t.Fatalf("the VM run failed: %v", err)
	}
	if code != 0 {
		t.Fatalf("%s failed in the VM (exit %d)", opts.Package, code)
	}
	return out.String()
}

func relDir(pkg string) string {
	if len(pkg) > 2 && pkg[:2] == "./" {
		return pkg[2:]
	}
	return "."
}

var ginkgoRan = regexp.MustCompile(`Ran (\d+) of (\d+) Specs`)

// GinkgoSpecsRun returns how many specs a ginkgo run's output says ran.
func GinkgoSpecsRun(output string) int {
	m := ginkgoRan.FindStringSubmatch(output)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
