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

// TestIntegrationVMRun boots one VM for everything a command run in it
// must see (a boot is 7 s on an idle machine, and more beside the VM
// suites in CI): the command's exit status and its two streams, every byte
// in order (stdout 200,000 lines, stderr 5,000, then exit 7); the shares,
// the working directory, the environment and the svclab binary; IPVS and
// its schedulers; the tools and the kernel's network devices. The three
// sections run first, each a script from the read-only share with its
// output, errors and status written to the read-write one, and each is
// checked in a subtest of its own.
func TestIntegrationVMRun(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	rw, ro, binDir := t.TempDir(), t.TempDir(), t.TempDir()
	sections := map[string]string{"shares": sharesScript, "ipvs": ipvsScript, "tools": toolsScript}
	for name, script := range sections {
		if err := os.WriteFile(filepath.Join(ro, name+".sh"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(ro, "in.txt"), []byte("from the host\n"), 0o644)
	stub := filepath.Join(binDir, "svclab-stub")
	os.WriteFile(stub, []byte("#!/bin/sh\necho \"svclab stub: $*\"\n"), 0o755)
	os.MkdirAll(filepath.Join(rw, "sub"), 0o755)
	t.Chdir(filepath.Join(rw, "sub"))
	command := `for s in shares ipvs tools; do
	bash /data/ro/$s.sh >/data/rw/$s.out 2>/data/rw/$s.err
	echo $? >/data/rw/$s.rc
done
seq 1 200000
seq 1 5000 >&2
exit 7
`
	code, out, errOut := runVM(t, Options{
		Command: []string{"bash", "-c", command},
		Shares:  []Share{{HostPath: rw, GuestPath: "/data/rw"}, {HostPath: ro, GuestPath: "/data/ro", ReadOnly: true}},
		Env:     map[string]string{"FOO": "bar baz"},
		Binary:  stub,
		Timeout: 15 * time.Minute,
	})
	section := func(t *testing.T, name string) string {
		t.Helper()
		rc, err := os.ReadFile(filepath.Join(rw, name+".rc"))
		output, _ := os.ReadFile(filepath.Join(rw, name+".out"))
		stderr, _ := os.ReadFile(filepath.Join(rw, name+".err"))
		t.Logf("%s's stdout:\n%s", name, output)
		if err != nil || strings.TrimSpace(string(rc)) != "0" {
			t.Fatalf("%s: status %q, %v; stderr:\n%s", name, rc, err, stderr)
		}
		return string(output)
	}

	t.Run("exit code and streams", func(t *testing.T) {
		if code != 7 {
			t.Errorf("exit %d, want 7", code)
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
	})
	t.Run("shares, working directory, environment and binary", func(t *testing.T) {
		got := section(t, "shares")
		want := "/data/rw/sub\nFOO=bar baz\nfrom the host\nsvclab stub: version\nSVCLAB_BIN=/usr/local/bin/svclab\n"
		if got != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
		}
		if data, err := os.ReadFile(filepath.Join(rw, "sub", "out.txt")); err != nil || string(data) != "written\n" {
			t.Errorf("the guest's write to the read-write share: %q, %v", data, err)
		}
	})
	t.Run("IPVS and its schedulers", func(t *testing.T) {
		got := section(t, "ipvs")
		for _, want := range []string{"TCP  10.0.0.1:80 rr", "-> 10.1.0.1:8080", "Masq    3"} {
			if !strings.Contains(got, want) {
				t.Errorf("ipvsadm output lacks %q", want)
			}
		}
		for _, s := range []string{"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "mh", "fo", "ovf"} {
			if !strings.Contains(got, "scheduler "+s+" ok") {
				t.Errorf("scheduler %s did not load", s)
			}
		}
	})
	t.Run("tools and network devices", func(t *testing.T) {
		got := section(t, "tools")
		if strings.Contains(got, "missing ") {
			t.Errorf("commands missing in the guest")
		}
		if !strings.Contains(got, "interfaces: lo \n") {
			t.Errorf("the guest's root network namespace must have only lo")
		}
		for _, want := range []string{"-N SVCLAB-TEST", "(nf_tables)", "curl ", "br0", "vx0", "v0@v1"} {
			if !strings.Contains(got, want) {
				t.Errorf("output lacks %q", want)
			}
		}
	})
}

// sharesScript prints the working directory (the host's, mapped into the
// read-write share), the environment, a file of the read-only share (and
// says if that share is writable), and what the svclab on PATH answers;
// it writes out.txt where it runs.
const sharesScript = `pwd
echo "FOO=$FOO"
echo written >out.txt
cat /data/ro/in.txt
if touch /data/ro/x 2>/dev/null; then echo "ro share is writable"; fi
svclab version
echo "SVCLAB_BIN=$SVCLAB_BIN"
`

// ipvsScript: IPVS works in the guest, and every IPVS scheduler of the
// kernel loads on demand (the kernel asks modprobe for ip_vs_NAME).
const ipvsScript = `set -e
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

// toolsScript: the tools are there and work, on both iptables backends;
// the guest's root network namespace has only lo; namespaces, veth, bridge
// and vxlan work.
const toolsScript = `for c in ip ss tc bridge iptables iptables-save iptables-restore iptables-legacy iptables-legacy-restore \
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

// Cancelling ends the VM at once: qemu is killed and reaped, the run's
// temporary files are removed, and Run says why. The runs' directories are
// the test's own: make test runs the VM suites beside this package, and
// their runs come and go in /run/svclab/vm meanwhile (a run of theirs that
// started during this one was once taken for a directory left behind).
func TestIntegrationVMRunCancel(t *testing.T) {
	roottest.Require(t, "boots a VM with qemu")
	prepareVM(t)
	root := filepath.Join(t.TempDir(), "runs")
	testRunRoot(t, root)
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
	if left, _ := filepath.Glob(filepath.Join(root, runDirPrefix+"*")); len(left) > 0 {
		t.Errorf("temporary directories left: %v", left)
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
