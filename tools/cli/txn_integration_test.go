package cli_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

// These tests interrupt lab-changing commands the ways a user does (kill
// -9, Ctrl-C, two terminals at once) and hold svclab to its promise: what
// `get` shows is what exists, the next command works, and `delete` leaves
// the host as it was.

const txnTopology = `
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: NAME}
spec:
  cni: flannel-vxlan
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  proxy: {mode: iptables}
  nodes:
  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}
`

const txnWeb = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: svclab/netexec:dev, ports: [{containerPort: 8080}]}]
`

// txnLab is one lab of these tests, driven through the CLI binary.
type txnLab struct {
	t    *testing.T
	bin  string
	name string
	topo string
	dir  string
}

func newTxnLab(t *testing.T, bin, prefix string) *txnLab {
	t.Helper()
	name := roottest.UniqueName(prefix)
	dir := t.TempDir()
	topo := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(topo, []byte(strings.ReplaceAll(txnTopology, "NAME", name)), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &txnLab{t: t, bin: bin, name: name, topo: topo, dir: dir}
	t.Cleanup(func() { l.run(nil, "delete", "lab", "--name", name) })
	return l
}

func (l *txnLab) web(replicas int) string {
	path := filepath.Join(l.dir, fmt.Sprintf("web-%d.yaml", replicas))
	if err := os.WriteFile(path, []byte(strings.Replace(txnWeb, "REPLICAS", fmt.Sprint(replicas), 1)), 0o644); err != nil {
		l.t.Fatal(err)
	}
	return path
}

// run runs svclab with extra environment and returns its output and exit
// code (128+signal when a signal ended it).
func (l *txnLab) run(env []string, args ...string) (string, int) {
	l.t.Helper()
	cmd := exec.Command(l.bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), exitCode(l.t, cmd, err)
}

func exitCode(t *testing.T, cmd *exec.Cmd, err error) int {
	t.Helper()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("svclab %s: %v", strings.Join(cmd.Args[1:], " "), err)
	}
	return 0
}

// crash runs a command with svclab set to kill itself (SIGKILL) at a step.
func (l *txnLab) crash(step string, args ...string) {
	l.t.Helper()
	if out, code := l.run([]string{netns.CrashEnv + "=" + step}, args...); code != 128+int(syscall.SIGKILL) {
		l.t.Fatalf("svclab %s with a crash at %s: exit %d, want a kill:\n%s", strings.Join(args, " "), step, code, out)
	}
}

// killAfter starts a command and kills it (SIGKILL) after delay, as a user
// or the OOM killer would at a moment nobody chose: the moment is the
// point, not a synchronisation, and every assertion after it must hold
// wherever it fell. It reports whether the kill landed (false: the command
// had finished, successfully or not, before it), so the caller asserts
// what is true in either case.
func (l *txnLab) killAfter(delay time.Duration, args ...string) (killed bool) {
	l.t.Helper()
	cmd := exec.Command(l.bin, args...)
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-exited:
		return false
	case <-timer.C:
	}
	cmd.Process.Kill() //nolint:errcheck // it may have finished meanwhile
	err := <-exited
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
}

// assertShown checks the promise that matters after any interruption:
// every namespace of the lab is a node, the router or a pod that
// `get pods` shows, so `delete pod` or the next command can reach it.
func (l *txnLab) assertShown(when string) {
	l.t.Helper()
	out, code := l.run(nil, "get", "pods", "-A", "--lab", l.name)
	if code != 0 {
		l.t.Fatalf("%s: get pods (exit %d):\n%s", when, code, out)
	}
	pods, err := network.Pods(l.name)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, p := range pods {
		if !strings.Contains(out, p.Name) {
			l.t.Errorf("%s: pod %s (%s) exists in the kernel but get pods does not show it:\n%s", when, p.Name, p.IP, out)
		}
	}
	namespaces, err := network.Namespaces(l.name)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, ns := range namespaces {
		host := strings.TrimPrefix(ns, network.NamespaceName(l.name, ""))
		if host != "router" && host != "node1" && !strings.Contains(out, host) {
			l.t.Errorf("%s: namespace %s is neither a host of the lab nor a pod get pods shows:\n%s", when, ns, out)
		}
	}
}

// assertSettled checks a lab after a successful command: the store's pods
// and the kernel's are the same set (want workload pods, and the lab's
// coredns pod).
func (l *txnLab) assertSettled(when string, want int) {
	l.t.Helper()
	out, _ := l.run(nil, "get", "pods", "-A", "--lab", l.name)
	pods, err := network.Pods(l.name)
	if err != nil {
		l.t.Fatal(err)
	}
	shown, system := 0, 0
	for _, line := range strings.Split(out, "\n") {
		switch f := strings.Fields(line); {
		case len(f) > 1 && f[0] == "default":
			shown++
		case len(f) > 1 && f[0] == "kube-system" && strings.HasPrefix(f[1], "coredns-"):
			system++
		}
	}
	if len(pods) != want+1 || shown != want || system != 1 || strings.Contains(out, "pending") {
		l.t.Errorf("%s: %d pods in the kernel, %d shown and %d coredns, want %d and the coredns pod:\n%s", when, len(pods), shown, system, want, out)
	}
}

// assertGoneFromHost checks that delete left nothing: no namespace, no
// state, no lock, and the host's root namespace as before.
func assertGoneFromHost(t *testing.T, name string, before roottest.HostSnapshot) {
	t.Helper()
	if ns, _ := network.Namespaces(name); len(ns) != 0 {
		t.Errorf("lab %s left namespaces %v", name, ns)
	}
	st := labstore.Open(name)
	for _, path := range []string{st.Dir, st.Dir + ".lock"} {
		if _, err := os.Stat(path); err == nil {
			t.Errorf("lab %s left %s", name, path)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(network.EtcNetnsDir, network.NamespaceName(name, "*"))); len(left) > 0 {
		t.Errorf("lab %s left resolv.conf directories %v", name, left)
	}
	if diff := before.Diff(roottest.SnapshotHost()); diff != "" {
		t.Errorf("the host changed:\n%s", diff)
	}
}

// TestIntegrationKilledApplyAndDeleteAreRecoverable kills `apply`, `delete
// pod -n kube-system` and `delete lab` at every step of their journal and
// at moments chosen by a clock (15 kills): after each, get shows every pod
// the kernel has, the next apply works, and delete leaves the host as it
// was. (On the code before the journal, the first kill after a pod was
// made left a pod get pods did not show, and the next apply failed with
// "IP … is already used".)
func TestIntegrationKilledApplyAndDeleteAreRecoverable(t *testing.T) {
	roottest.Require(t, "builds labs from network namespaces")
	before := roottest.SnapshotHost()
	l := newTxnLab(t, roottest.SharedBinary(t), "kill")
	if out, code := l.run(nil, "create", "lab", "--config", l.topo); code != 0 {
		t.Fatalf("create (exit %d):\n%s", code, out)
	}
	three, one := l.web(3), l.web(1)
	if out, code := l.run(nil, "apply", "--lab", l.name, "-f", three); code != 0 {
		t.Fatalf("apply (exit %d):\n%s", code, out)
	}
	// Kills at moments chosen by a clock, wherever they fall.
	for i, delay := range []time.Duration{150 * time.Millisecond, 400 * time.Millisecond, 700 * time.Millisecond} {
		l.killAfter(delay, "apply", "--lab", l.name, "-f", []string{one, three, one}[i])
		l.assertShown(fmt.Sprintf("after a kill %s into apply", delay))
	}
	if out, code := l.run(nil, "apply", "--lab", l.name, "-f", three); code != 0 {
		t.Fatalf("the apply after the clock's kills (exit %d):\n%s", code, out)
	}
	l.assertSettled("after the clock's kills and an apply", 3)
	// Each kill at a step of the journal, with a manifest that gives the
	// step work (pods to make or to remove); the next apply settles it
	// first: rolls a prepared change back, a committed one forward.
	for _, kill := range []struct{ step, manifest string }{
		{"update:intent", one},        // 3 → 1 killed before anything: stays 3
		{"update:commit", one},        // 3 → 1 committed: becomes 1
		{"update:objects", three},     // 1 → 3 stored: becomes 3
		{"update:pod-stopped", one},   // 3 → 1 half the pods removed: becomes 1
		{"pod:attached", three},       // 1 → 3 a pod without its server: stays 1
		{"update:pod-started", three}, // 1 → 3 one new pod up: stays 1
		{"update:pod-started#2", three},
		{"update:commit", three}, // 1 → 3 committed: becomes 3
	} {
		l.crash(kill.step, "apply", "--lab", l.name, "-f", kill.manifest)
		l.assertShown("after a kill at " + kill.step)
	}
	out, code := l.run(nil, "apply", "--lab", l.name, "-f", three)
	if code != 0 {
		t.Fatalf("the apply after the kills (exit %d):\n%s", code, out)
	}
	l.assertSettled("after the kills and an apply", 3)
	if out, code := l.run(nil, "get", "labs"); code != 0 || !strings.Contains(out, l.name) || !lineHas(out, l.name, "running") {
		t.Errorf("get labs after recovery:\n%s", out)
	}

	// A proxy restart killed between stopping the proxy and starting the
	// next: the next command starts it.
	l.crash("restart:stopped", "delete", "pod", "--lab", l.name, "-n", "kube-system", "-l", "k8s-app=kube-proxy")
	if out, _ := l.run(nil, "get", "labs"); !lineHas(out, l.name, "incomplete (restart proxies interrupted") {
		t.Errorf("get labs after a killed proxy restart:\n%s", out)
	}
	if out, code := l.run(nil, "apply", "--lab", l.name, "-f", one); code != 0 || !strings.Contains(out, "started it") {
		t.Fatalf("apply after a killed proxy restart (exit %d):\n%s", code, out)
	}
	l.assertSettled("after the proxy restart was finished", 1)

	// delete lab killed at each step: shown as such, finished by the next.
	for _, step := range []string{"delete:intent", "delete:processes", "delete:namespaces"} {
		l.crash(step, "delete", "lab", "--name", l.name)
		if out, _ := l.run(nil, "get", "labs"); !lineHas(out, l.name, "incomplete (delete interrupted") {
			t.Errorf("get labs after a kill at %s:\n%s", step, out)
		}
		if out, code := l.run(nil, "apply", "--lab", l.name, "-f", one); code == 0 || !strings.Contains(out, "delete was interrupted") {
			t.Errorf("apply on a half-deleted lab (exit %d):\n%s", code, out)
		}
	}
	if out, code := l.run(nil, "delete", "lab", "--name", l.name); code != 0 {
		t.Fatalf("delete (exit %d):\n%s", code, out)
	}
	assertGoneFromHost(t, l.name, before)
}

// TestIntegrationKilledCreateIsShownAndDeletable kills `create lab` at
// each step (and once by the clock): get labs says the build did not
// finish (the code before said "running" of a lab whose node had no
// flannel.1, or showed nothing), neither apply nor a second create touches
// it, and delete removes it all.
func TestIntegrationKilledCreateIsShownAndDeletable(t *testing.T) {
	roottest.Require(t, "builds labs from network namespaces")
	before := roottest.SnapshotHost()
	bin := roottest.SharedBinary(t)
	for _, step := range []string{"clock", "create:intent", "create:network", "create:proxies"} {
		l := newTxnLab(t, bin, "kcreate")
		killed := true
		if step == "clock" {
			killed = l.killAfter(300*time.Millisecond, "create", "lab", "--config", l.topo)
		} else {
			l.crash(step, "create", "lab", "--config", l.topo)
		}
		out, _ := l.run(nil, "get", "labs")
		ns, _ := network.Namespaces(l.name)
		switch {
		case !killed:
			// The create finished before the clock's kill: a whole lab.
			if !lineHas(out, l.name, "running") {
				t.Errorf("get labs after a create that finished before the clock's kill:\n%s", out)
			}
		case (len(ns) > 0 || step != "clock") && !lineHas(out, l.name, "incomplete (create interrupted"):
			t.Errorf("get labs after a kill at %s (namespaces %v):\n%s", step, ns, out)
		}
		if step != "clock" {
			if out, code := l.run(nil, "apply", "--lab", l.name, "-f", l.web(1)); code == 0 || !strings.Contains(out, "create was interrupted") {
				t.Errorf("apply on a half-built lab (kill at %s, exit %d):\n%s", step, code, out)
			}
			if out, code := l.run(nil, "create", "lab", "--config", l.topo); code == 0 || !strings.Contains(out, "already exists") {
				t.Errorf("a second create over a half-built lab (kill at %s, exit %d):\n%s", step, code, out)
			}
		}
		if out, code := l.run(nil, "delete", "lab", "--name", l.name); code != 0 {
			t.Fatalf("delete after a kill at %s (exit %d):\n%s", step, code, out)
		}
		assertGoneFromHost(t, l.name, before)
	}
}

// TestIntegrationInterruptRollsBack sends SIGINT (Ctrl-C) to `apply` while
// it makes pods and to `create` while it builds: each says it rolled back
// and exits 130, apply leaves the lab as it was (the code before left the
// pods it had made, unseen), create leaves nothing.
func TestIntegrationInterruptRollsBack(t *testing.T) {
	roottest.Require(t, "builds labs from network namespaces")
	before := roottest.SnapshotHost()
	l := newTxnLab(t, roottest.SharedBinary(t), "sigint")

	out, code := l.interruptWhen("building network", "create", "lab", "--config", l.topo)
	if code != 130 || !strings.Contains(out, "create interrupted") || !strings.Contains(out, "rolled back") {
		t.Errorf("create interrupted (exit %d, want 130):\n%s", code, out)
	}
	assertGoneFromHost(t, l.name, before)

	if out, code := l.run(nil, "create", "lab", "--config", l.topo); code != 0 {
		t.Fatalf("create (exit %d):\n%s", code, out)
	}
	if out, code := l.run(nil, "apply", "--lab", l.name, "-f", l.web(1)); code != 0 {
		t.Fatalf("apply (exit %d):\n%s", code, out)
	}
	// The apply holds after its first pod's line until it is interrupted:
	// the interrupt lands while it makes pods, whatever the machine's speed.
	out, code = l.interruptWith(" created on ", syscall.SIGINT, []string{netns.HoldEnv + "=update:pod-reported"}, "apply", "--lab", l.name, "-f", l.web(6))
	if code != 130 || !strings.Contains(out, "apply interrupted") || !strings.Contains(out, "rolled back: pod/") {
		t.Errorf("apply interrupted (exit %d, want 130):\n%s", code, out)
	}
	l.assertSettled("after the interrupted apply", 1)
	if out, code := l.run(nil, "apply", "--lab", l.name, "-f", l.web(3)); code != 0 || strings.Contains(out, "interrupted") {
		t.Fatalf("apply after the interrupt (exit %d):\n%s", code, out)
	}
	l.assertSettled("after the next apply", 3)
	if out, code := l.run(nil, "delete", "lab", "--name", l.name); code != 0 {
		t.Fatalf("delete (exit %d):\n%s", code, out)
	}
	assertGoneFromHost(t, l.name, before)
}

// interruptWhen runs svclab and sends it SIGINT when its output first has
// a line containing marker; it returns the whole output and the exit code.
func (l *txnLab) interruptWhen(marker string, args ...string) (string, int) {
	l.t.Helper()
	return l.interruptWith(marker, syscall.SIGINT, nil, args...)
}

// interruptWith starts a command, with env added to its environment, and
// sends it sig once it prints marker.
func (l *txnLab) interruptWith(marker string, sig syscall.Signal, env []string, args ...string) (string, int) {
	l.t.Helper()
	cmd := exec.Command(l.bin, args...)
	cmd.Env = append(os.Environ(), env...)
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		l.t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(pipe)
	sent := false
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if !sent && strings.Contains(sc.Text(), marker) {
			cmd.Process.Signal(sig) //nolint:errcheck // it may have finished
			sent = true
		}
	}
	err = cmd.Wait()
	if !sent {
		l.t.Fatalf("svclab %s never printed %q:\n%s", strings.Join(args, " "), marker, out.String())
	}
	return out.String(), exitCode(l.t, cmd, err)
}

// TestIntegrationConcurrentCreateOfOneName starts three `create lab` of
// one name at once, 10 times: exactly one succeeds, the others fail saying
// the lab exists, and the lab is intact (on the code before, the existence
// check ran before the lock, and the loser's clean-up deleted the winner's
// lab).
func TestIntegrationConcurrentCreateOfOneName(t *testing.T) {
	roottest.Require(t, "builds labs from network namespaces")
	before := roottest.SnapshotHost()
	bin := roottest.SharedBinary(t)
	const contenders = 3
	for i := 0; i < 10; i++ {
		l := newTxnLab(t, bin, "race")
		var wg sync.WaitGroup
		outs, codes := make([]string, contenders), make([]int, contenders)
		cmds := make([]*exec.Cmd, contenders)
		for j := range cmds {
			cmds[j] = exec.Command(bin, "create", "lab", "--config", l.topo)
		}
		for j, cmd := range cmds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := cmd.CombinedOutput()
				outs[j], codes[j] = string(out), exitCode(t, cmd, err)
			}()
		}
		wg.Wait()
		up, exists := 0, 0
		for j := range cmds {
			switch {
			case codes[j] == 0 && strings.Contains(outs[j], "lab "+l.name+" is up"):
				up++
			case codes[j] != 0 && strings.Contains(outs[j], "already exists"):
				exists++
			}
		}
		if up != 1 || exists != contenders-1 {
			var b strings.Builder
			for j := range cmds {
				fmt.Fprintf(&b, "--- create %d (exit %d)\n%s", j, codes[j], outs[j])
			}
			t.Fatalf("run %d: want one create up and %d refused:\n%s", i, contenders-1, b.String())
		}
		out, _ := l.run(nil, "get", "labs")
		ns, _ := network.Namespaces(l.name)
		if !lineHas(out, l.name, "running") || len(ns) != 3 { // node1, router, the coredns pod
			t.Fatalf("run %d: the lab is not intact (namespaces %v):\n%s", i, ns, out)
		}
		if out, code := l.run(nil, "delete", "lab", "--name", l.name); code != 0 {
			t.Fatalf("delete (exit %d):\n%s", code, out)
		}
	}
	if diff := before.Diff(roottest.SnapshotHost()); diff != "" {
		t.Errorf("the host changed:\n%s", diff)
	}
}

// TestIntegrationDeleteWaitsForTheLabsLock holds a lab's lock as a command
// changing it would, and checks that `delete lab` waits for it (the code
// before took no lock and deleted the lab under the command's feet).
func TestIntegrationDeleteWaitsForTheLabsLock(t *testing.T) {
	roottest.Require(t, "builds labs from network namespaces")
	l := newTxnLab(t, roottest.SharedBinary(t), "dlock")
	if out, code := l.run(nil, "create", "lab", "--config", l.topo); code != 0 {
		t.Fatalf("create (exit %d):\n%s", code, out)
	}
	unlock, err := labstore.Open(l.name).Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(l.bin, "delete", "lab", "--name", l.name)
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		unlock()
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	// The synchronisation point: delete lab has opened the lock file, so
	// it is at the lock. Then a while in which it must not finish (a
	// window for what must not happen: a slow host cannot fail it).
	lockFile, err := filepath.EvalSymlinks(labstore.Open(l.name).Dir + ".lock") // as /proc shows it
	if err != nil {
		unlock()
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Minute); !hasOpen(cmd.Process.Pid, lockFile); time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-done:
			unlock()
			t.Fatalf("delete lab finished (%v) without waiting for the lab's lock, held by another command", err)
		default:
		}
		if time.Now().After(end) {
			unlock()
			cmd.Process.Kill() //nolint:errcheck // the test fails anyway
			t.Fatalf("delete lab did not open the lab's lock %s within a minute", lockFile)
		}
	}
	select {
	case err := <-done:
		unlock()
		t.Fatalf("delete lab finished (%v) while another command held the lab's lock", err)
	case <-time.After(700 * time.Millisecond):
	}
	if ns, _ := network.Namespaces(l.name); len(ns) != 3 { // node1, router, the coredns pod
		t.Errorf("the lab changed under a held lock: namespaces %v", ns)
	}
	unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("delete lab after the lock was released: %v", err)
		}
	case <-time.After(netns.DefaultTimeout):
		cmd.Process.Kill() //nolint:errcheck // the test fails anyway
		t.Fatalf("delete lab did not finish within %s once the lock was free", netns.DefaultTimeout)
	}
	if ns, _ := network.Namespaces(l.name); len(ns) != 0 {
		t.Errorf("delete left namespaces %v", ns)
	}
}

// hasOpen reports whether process pid has path open.
func hasOpen(pid int, path string) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// lineHas reports whether a line of out mentions name and want.
func lineHas(out, name, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, name+" ") && strings.Contains(line, want) {
			return true
		}
	}
	return false
}
