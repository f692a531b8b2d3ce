package vm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/cmdrun"
	"github.com/svclab/svclab/internal/hostprog"

	"github.com/svclab/svclab/internal/roottest"
)

// prepareOnce installs the host packages (qemu…) and builds (or reuses)
// the image once for all integration tests of this package.
var prepareOnce struct {
	sync.Once
	err error
}

func prepareVM(t *testing.T) {
	t.Helper()
	prepareOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		if err := hostprog.Ensure(ctx, os.Stderr, hostprog.Needs(hostprog.VM)...); err != nil {
			prepareOnce.err = err
			return
		}
		img, err := Prepare(ctx, PrepareOptions{Log: testLog{t}})
		if err != nil {
			prepareOnce.err = err
			return
		}
		t.Logf("image %s (built now: %v) ready in %s", filepath.Base(img.Dir), img.Built, img.Took.Round(time.Millisecond))
	})
	if prepareOnce.err != nil {
		t.Fatal(prepareOnce.err)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// runVM runs a command in the VM and returns its exit code, stdout and stderr.
func runVM(t *testing.T, opts Options) (int, string, string) {
	t.Helper()
	var stdout, stderr, console bytes.Buffer
	opts.Stdout, opts.Stderr, opts.Console, opts.Log = &stdout, &stderr, &console, testLog{t}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Minute
	}
	start := time.Now()
	code, err := Run(context.Background(), opts)
	t.Logf("%q: exit %d in %s", opts.Command, code, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("Run %q: %v", opts.Command, err)
	}
	return code, stdout.String(), stderr.String()
}

func TestIntegrationVMRunExitCodeAndStreams(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	code, out, errOut := runVM(t, Options{Command: []string{"sh", "-c", "echo hi; echo oops >&2; exit 7"}})
	if code != 7 || out != "hi\n" || errOut != "oops\n" {
		t.Fatalf("got exit %d, stdout %q, stderr %q; want 7, \"hi\\n\", \"oops\\n\"", code, out, errOut)
	}
}

// Every byte of a large output arrives, in order, on the right stream.
func TestIntegrationVMRunLargeOutput(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	code, out, errOut := runVM(t, Options{Command: []string{"sh", "-c", "seq 1 200000; seq 1 5000 >&2"}})
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, cmdrun.Tail(errOut, 500))
	}
	for name, got := range map[string]struct {
		s string
		n int
	}{"stdout": {out, 200000}, "stderr": {errOut, 5000}} {
		var want strings.Builder
		for i := 1; i <= got.n; i++ {
			fmt.Fprintf(&want, "%d\n", i)
		}
		if got.s != want.String() {
			t.Errorf("%s: %d bytes, want %d (seq 1 %d); ends with %q", name, len(got.s), want.Len(), got.n, cmdrun.Tail(got.s, 40))
		}
	}
}

// IPVS works in the guest, and every IPVS scheduler of the kernel loads on
// demand (the kernel asks modprobe for ip_vs_NAME).
func TestIntegrationVMRunIPVS(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	script := `set -e
ipvsadm -A -t 10.0.0.1:80 -s rr && ipvsadm -Ln
n=2
for s in rr wrr lc wlc lblc lblcr dh sh sed nq mh fo ovf twos; do
	if modprobe -n -q ip_vs_$s; then
		ipvsadm -A -t 10.0.0.$n:80 -s $s
		echo "scheduler $s ok"
	else
		echo "scheduler $s absent"
	fi
	n=$((n + 1))
done
ipvsadm -a -t 10.0.0.1:80 -r 10.1.0.1:8080 -m -w 3
ipvsadm -Ln -t 10.0.0.1:80
lsmod | grep -c '^ip_vs_'
`
	code, out, errOut := runVM(t, Options{Command: []string{"sh", "-c", script}})
	t.Logf("stdout:\n%s", out)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"TCP  10.0.0.1:80 rr", "-> 10.1.0.1:8080", "Masq    3"} {
		if !strings.Contains(out, want) {
			t.Errorf("ipvsadm output lacks %q", want)
		}
	}
	for _, s := range []string{"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "mh", "fo", "ovf"} {
		if !strings.Contains(out, "scheduler "+s+" ok") {
			t.Errorf("scheduler %s did not load", s)
		}
	}
}

// The tools are there and work, on both iptables backends; the guest's root
// network namespace has only lo; namespaces, veth, bridge and vxlan work.
func TestIntegrationVMRunTools(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	script := `for c in ip ss tc bridge iptables iptables-save iptables-restore iptables-legacy iptables-legacy-restore \
	iptables-nft iptables-nft-restore ip6tables nft ipset ipvsadm conntrack curl ps pgrep sysctl mount nsenter unshare \
	modprobe lsmod tcpdump bash busybox awk sed grep sort seq timeout nc; do
	command -v $c >/dev/null || echo "missing $c"
done
echo "interfaces: $(ls /sys/class/net | tr '\n' ' ')"
echo "kernel: $(uname -r)"
set -e
iptables -V
iptables-legacy -t nat -N SVCLAB-TEST && iptables-legacy -t nat -S SVCLAB-TEST
iptables-nft -t nat -N SVCLAB-TEST && iptables-nft -t nat -S SVCLAB-TEST
iptables-legacy -t nat -A SVCLAB-TEST -p tcp -d 10.96.0.1 --dport 80 -m comment --comment x -j DNAT --to-destination 10.1.0.1:8080
ipset create svclab-test hash:ip,port && ipset add svclab-test 10.0.0.1,tcp:80 && ipset list svclab-test | grep -c 10.0.0.1
conntrack -L 2>&1 | tail -1
curl --version | head -1
ip netns add lab
ip -n lab link set lo up
ip -n lab link add v0 type veth peer name v1
ip -n lab link add br0 type bridge
ip -n lab link add vx0 type vxlan id 42 dstport 4789 local 127.0.0.1
ip -n lab -br link | sort
`
	code, out, errOut := runVM(t, Options{Command: []string{"bash", "-c", script}})
	t.Logf("stdout:\n%s", out)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	if strings.Contains(out, "missing ") {
		t.Errorf("commands missing in the guest")
	}
	if !strings.Contains(out, "interfaces: lo \n") {
		t.Errorf("the guest's root network namespace must have only lo")
	}
	for _, want := range []string{"-N SVCLAB-TEST", "(nf_tables)", "curl ", "br0", "vx0", "v0@v1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// Shares (read-write and read-only), the working directory mapped from the
// host's, the environment and the svclab binary on PATH.
func TestIntegrationVMRunSharesEnvBinary(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	rw, ro, binDir := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ro, "in.txt"), []byte("from the host\n"), 0o644)
	stub := filepath.Join(binDir, "svclab-stub")
	os.WriteFile(stub, []byte("#!/bin/sh\necho \"svclab stub: $*\"\n"), 0o755)
	os.MkdirAll(filepath.Join(rw, "sub"), 0o755)
	t.Chdir(filepath.Join(rw, "sub"))
	script := `pwd
echo "FOO=$FOO"
echo written >out.txt
cat /data/ro/in.txt
if touch /data/ro/x 2>/dev/null; then echo "ro share is writable"; fi
svclab version
echo "SVCLAB_BIN=$SVCLAB_BIN"
`
	code, out, errOut := runVM(t, Options{
		Command: []string{"sh", "-c", script},
		Shares:  []Share{{HostPath: rw, GuestPath: "/data/rw"}, {HostPath: ro, GuestPath: "/data/ro", ReadOnly: true}},
		Env:     map[string]string{"FOO": "bar baz"},
		Binary:  stub,
	})
	if code != 0 {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := "/data/rw/sub\nFOO=bar baz\nfrom the host\nsvclab stub: version\nSVCLAB_BIN=/usr/local/bin/svclab\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", out, want, errOut)
	}
	if data, err := os.ReadFile(filepath.Join(rw, "sub", "out.txt")); err != nil || string(data) != "written\n" {
		t.Errorf("the guest's write to the read-write share: %q, %v", data, err)
	}
}

// Cancelling ends the VM at once: qemu is killed and reaped, the run's
// temporary files are removed, and Run says why.
func TestIntegrationVMRunCancel(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	before, _ := filepath.Glob(filepath.Join(runRoot(), runDirPrefix+"*"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	code, err := Run(ctx, Options{
		Command: []string{"sh", "-c", "echo ready; sleep 600"},
		Stdout:  writerFunc(func([]byte) { cancel() }),
	})
	if err == nil || !strings.Contains(err.Error(), "cancelled") || code != -1 {
		t.Fatalf("Run = %d, %v; want -1 and a cancellation error", code, err)
	}
	t.Logf("cancelled after %s: %v", time.Since(start).Round(time.Millisecond), firstLine(err.Error()))
	if kids := qemuChildren(); len(kids) > 0 {
		t.Errorf("qemu processes left: %v", kids)
	}
	after, _ := filepath.Glob(filepath.Join(runRoot(), runDirPrefix+"*"))
	if len(after) > len(before) {
		t.Errorf("temporary directories left: %v (before: %v)", after, before)
	}

	code, err = Run(context.Background(), Options{Command: []string{"sleep", "600"}, Timeout: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("Run with a 3s timeout = %d, %v", code, err)
	}
}

// qemuChildren lists this process's qemu children (pid and state).
func qemuChildren() []string {
	var kids []string
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		data, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) && strings.Contains(string(data), "(qemu-system") {
			kids = append(kids, s+" "+f[0])
		}
	}
	return kids
}
