package kubelet

import (
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/netnsdial"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/agents/selfexec"
)

// kubeletFixture is a node namespace with `svclab kubelet` in it, two pod
// namespaces, and the lab store the kubelet reads.
type kubeletFixture struct {
	t          *testing.T
	store      *labstore.Store
	node       string // the node's network namespace
	podA, podB string // the pods' network namespaces
	bin        string
}

func newKubeletFixture(t *testing.T) *kubeletFixture {
	roottest.Require(t, "creates network namespaces")
	f := &kubeletFixture{
		t: t, store: testStore(t), bin: roottest.SharedBinary(t),
		node: roottest.Netns(t, "svclab-kubelettest"), podA: roottest.Netns(t, "svclab-kubelettest"), podB: roottest.Netns(t, "svclab-kubelettest"),
	}
	t.Cleanup(func() { process.StopInNamespaces([]string{f.node}, time.Second) })
	return f
}

// start runs the kubelet in the node's namespace and waits for it to
// answer a sync (it answers none before its own first sync).
func (f *kubeletFixture) start() int {
	f.t.Helper()
	pid, err := process.Start(process.Spec{
		Namespace: f.node, Args: selfexec.Argv(f.bin, &selfexec.Kubelet{LabDir: f.store.Dir, Node: "node1"}),
		LogFile: f.store.Path("logs", "node1_kubelet.log"),
	})
	if err != nil {
		f.t.Fatal(err)
	}
	for end := time.Now().Add(time.Minute); !f.answers(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) || !process.Alive(pid) {
			data, _ := os.ReadFile(f.store.Path("logs", "node1_kubelet.log"))
			f.t.Fatalf("the kubelet (pid %d) does not answer:\n%s", pid, data)
		}
	}
	return pid
}

func (f *kubeletFixture) answers() bool {
	_, err := Sync(context.Background(), f.node)
	return err == nil
}

func (f *kubeletFixture) sync() Reply {
	f.t.Helper()
	r, err := Sync(context.Background(), f.node)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// get GETs path from the pod's server, inside the pod's namespace.
func (f *kubeletFixture) get(netns string, port, path string) (string, error) {
	client := &http.Client{Transport: &http.Transport{DialContext: netnsdial.Dialer(netns), DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := client.Get("http://127.0.0.1:" + port + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func (f *kubeletFixture) status(pod string) labstore.PodStatus {
	f.t.Helper()
	st, ok, err := f.store.PodStatus(pod)
	if err != nil || !ok {
		f.t.Fatalf("pod %s's status: %v, %v", pod, ok, err)
	}
	return st
}

func (f *kubeletFixture) pidFile(pod string) string {
	data, _ := os.ReadFile(f.store.Path("run", pod+".pid"))
	return strings.TrimSpace(string(data))
}

// One kubelet serves two pods, each on its own namespace's sockets, with
// its status, pid file and log; a pod whose spec goes is closed by the
// sync that follows; a spec that cannot start is a failure of that pod
// alone.
func TestIntegrationKubeletServesPods(t *testing.T) {
	f := newKubeletFixture(t)
	pid := f.start()
	for _, s := range []Spec{
		{Namespace: "default", Name: "web-a", Node: "node1", NetNS: f.podA, PodIPs: []string{"10.244.1.2"}, Ports: []int{8080}, UDPPorts: []int{8081}},
		{Namespace: "default", Name: "web-b", Node: "node1", NetNS: f.podB, Ports: []int{8080}},
		{Namespace: "default", Name: "web-c", Node: "node1", NetNS: "svclab-kubelettest-no-such-namespace", Ports: []int{8080}},
	} {
		if err := WriteSpec(f.store, s); err != nil {
			t.Fatal(err)
		}
	}
	r := f.sync()
	if len(r.Failed) != 1 || !strings.Contains(r.Failed["web-c"], "no-such-namespace") {
		t.Errorf("sync failures: %v, want web-c's namespace only", r.Failed)
	}
	// Bound when the sync answered: no wait.
	for pod, ns := range map[string]string{"web-a": f.podA, "web-b": f.podB} {
		if got, err := f.get(ns, "8080", "/hostname"); err != nil || got != pod {
			t.Errorf("%s's /hostname: %q, %v", pod, got, err)
		}
		st := f.status(pod)
		if st.State != labstore.StateRunning || st.PID != pid || st.SupervisorPID != pid || st.Restarts != 0 || st.Node != "node1" {
			t.Errorf("%s's status: %+v, want Running in pid %d", pod, st, pid)
		}
		if got := f.pidFile(pod); got != itoa(pid) {
			t.Errorf("%s's pid file: %q, want %d", pod, got, pid)
		}
	}
	if got, _ := f.get(f.podA, "8080", "/"); !strings.Contains(got, "10.244.1.2") {
		t.Errorf("web-a's / does not report its pod IP: %s", got)
	}
	if log, _ := os.ReadFile(f.store.Path("logs", "web-a.log")); !strings.Contains(string(log), "started the server of pod default/web-a") {
		t.Errorf("web-a's log:\n%s", log)
	}
	if _, ok, _ := f.store.PodStatus("web-c"); ok {
		t.Error("web-c, which did not start, has a status")
	}

	if err := RemoveSpec(f.store, "node1", "web-b"); err != nil {
		t.Fatal(err)
	}
	f.sync()
	if _, err := f.get(f.podB, "8080", "/hostname"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("web-b answered after its spec went: %v", err)
	}
	if got := f.pidFile("web-b"); got != "" {
		t.Errorf("web-b's pid file is left: %q", got)
	}
	if got, err := f.get(f.podA, "8080", "/hostname"); err != nil || got != "web-a" {
		t.Errorf("web-a after web-b went: %q, %v", got, err)
	}
}

// A terminating pod's server answers for its delay, then stops (Completed,
// its pid file gone); one whose deadline comes first is closed at the
// deadline.
func TestIntegrationKubeletTerminatesPods(t *testing.T) {
	f := newKubeletFixture(t)
	f.start()
	slow := Spec{Namespace: "default", Name: "slow", Node: "node1", NetNS: f.podA, Ports: []int{8080}, DelayShutdown: 2 * time.Second}
	cut := Spec{Namespace: "default", Name: "cut", Node: "node1", NetNS: f.podB, Ports: []int{8080}, DelayShutdown: time.Hour}
	for _, s := range []Spec{slow, cut} {
		if err := WriteSpec(f.store, s); err != nil {
			t.Fatal(err)
		}
	}
	f.sync()
	told := time.Now()
	slowDeadline, cutDeadline := told.Add(30*time.Second), told.Add(time.Second)
	slow.Deadline, cut.Deadline = &slowDeadline, &cutDeadline
	for _, s := range []Spec{slow, cut} {
		if err := WriteSpec(f.store, s); err != nil {
			t.Fatal(err)
		}
	}
	f.sync()
	if got, err := f.get(f.podA, "8080", "/hostname"); err != nil || got != "slow" {
		t.Errorf("slow does not answer during its delay: %q, %v", got, err)
	}
	for pod, after := range map[string]time.Duration{"slow": 2 * time.Second, "cut": time.Second} {
		for end := time.Now().Add(time.Minute); f.pidFile(pod) != ""; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s's server still runs a minute after it was told to terminate", pod)
			}
		}
		if took := time.Since(told); took < after {
			t.Errorf("%s stopped %s after it was told, before its %s", pod, took, after)
		}
		if st := f.status(pod); st.State != labstore.StateTerminated || st.Reason != labstore.ReasonCompleted || st.PID != 0 {
			t.Errorf("%s's status after it stopped: %+v", pod, st)
		}
	}
	if log, _ := os.ReadFile(f.store.Path("logs", "cut.log")); !strings.Contains(string(log), "grace period over") {
		t.Errorf("cut's log does not say it was closed at its deadline:\n%s", log)
	}
	// A sync after that starts neither again.
	f.sync()
	if got := f.pidFile("slow") + f.pidFile("cut"); got != "" {
		t.Errorf("a sync restarted a terminated pod: pid files %q", got)
	}
}

// A kubelet killed takes its pods' servers with it (their pid files then
// name a dead process); the kubelet started again brings them back, each
// with one restart, the last termination saying why.
func TestIntegrationKubeletRestartBringsPodsBack(t *testing.T) {
	f := newKubeletFixture(t)
	first := f.start()
	if err := WriteSpec(f.store, Spec{Namespace: "default", Name: "web-a", Node: "node1", NetNS: f.podA, Ports: []int{8080}}); err != nil {
		t.Fatal(err)
	}
	f.sync()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !process.WaitGone([]int{first}, time.Minute) {
		t.Fatal("the killed kubelet is still alive")
	}
	if _, err := f.get(f.podA, "8080", "/hostname"); err == nil {
		t.Error("web-a answers with its kubelet killed")
	}
	second := f.start() // answers only once it has synced
	if got, err := f.get(f.podA, "8080", "/hostname"); err != nil || got != "web-a" {
		t.Errorf("web-a after the kubelet's restart: %q, %v", got, err)
	}
	st := f.status("web-a")
	if st.Restarts != 1 || st.PID != second || st.State != labstore.StateRunning || st.LastTermination == nil ||
		!strings.Contains(st.LastTermination.Message, "kubelet (pid "+itoa(first)+")") {
		t.Errorf("web-a's status after the restart: %+v", st)
	}
	if got := f.pidFile("web-a"); got != itoa(second) {
		t.Errorf("web-a's pid file: %q, want %d", got, second)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// waitStatus waits until the pod's status satisfies ok and returns it: it
// reads the status again whenever a file in the store's pods directory
// changes (the kubelet writes it on every change of the process).
func (f *kubeletFixture) waitStatus(pod string, ok func(labstore.PodStatus) bool) labstore.PodStatus {
	f.t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		f.t.Fatal(err)
	}
	defer w.Close()
	dir, err := f.store.Confine("pods")
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err == nil {
		err = w.Add(dir) // before the first read: no write goes unseen
	}
	if err != nil {
		f.t.Fatal(err)
	}
	timeout := time.After(time.Minute)
	for {
		st, found, err := f.store.PodStatus(pod)
		if err != nil {
			f.t.Fatal(err)
		}
		if found && ok(st) {
			return st
		}
		select {
		case <-w.Events:
		case <-w.Errors: // an overflow: read again
		case <-timeout:
			f.t.Fatalf("%s's status never got there in a minute; last: %+v", pod, st)
		}
	}
}

// netnsOf is the network namespace a process is in.
func netnsOf(t *testing.T, pid int) string {
	t.Helper()
	link, err := os.Readlink("/proc/" + itoa(pid) + "/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	return link
}

// A process pod (a node's kube-proxy) runs in the node's namespace under
// the kubelet, which restarts it when it dies; a kubelet killed leaves it
// running, and the next kubelet stops that one before it starts its own
// (one restart more); a removed spec stops it.
func TestIntegrationKubeletRunsProcessPods(t *testing.T) {
	f := newKubeletFixture(t)
	first := f.start()
	spec := Spec{Namespace: "kube-system", Name: "kube-proxy-node1", Node: "node1", NetNS: f.node,
		Args: []string{"/bin/sleep", "300"}, Log: "logs/node1-kube-proxy.log"}
	if err := WriteSpec(f.store, spec); err != nil {
		t.Fatal(err)
	}
	if r := f.sync(); len(r.Failed) > 0 {
		t.Fatalf("sync: %v", r.Failed)
	}
	running := func(st labstore.PodStatus) bool {
		return st.State == labstore.StateRunning && st.PID != 0 && process.Alive(st.PID)
	}
	st := f.waitStatus(spec.Name, running)
	if st.SupervisorPID != first || st.Restarts != 0 || netnsOf(t, st.PID) != netnsOf(t, first) {
		t.Errorf("the process pod's first status: %+v (kubelet %d)", st, first)
	}

	// The process dies: the kubelet starts it again at once.
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := st.PID
	st = f.waitStatus(spec.Name, func(st labstore.PodStatus) bool { return running(st) && st.PID != killed })
	if st.Restarts != 1 || st.LastTermination == nil || st.LastTermination.Signal != "SIGKILL" {
		t.Errorf("after the process was killed: %+v", st)
	}
	if log, _ := os.ReadFile(f.store.Path(spec.Log)); !strings.Contains(string(log), "container ended (Error, killed by SIGKILL)") {
		t.Errorf("the pod's log does not say how its container ended:\n%s", log)
	}

	// The kubelet dies: the process outlives it, and the next kubelet
	// replaces it.
	orphan := st.PID
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !process.WaitGone([]int{first}, time.Minute) {
		t.Fatal("the killed kubelet is still alive")
	}
	if !process.Alive(orphan) {
		t.Fatal("the process died with its kubelet")
	}
	second := f.start()
	st = f.waitStatus(spec.Name, func(st labstore.PodStatus) bool { return running(st) && st.PID != orphan })
	if process.Alive(orphan) {
		t.Errorf("the process of the killed kubelet (pid %d) still runs beside the new one (pid %d)", orphan, st.PID)
	}
	if log, _ := os.ReadFile(f.store.Path(spec.Log)); !strings.Contains(string(log), "stopping pid "+itoa(orphan)) {
		t.Errorf("the pod's log does not say its process was replaced:\n%s", log)
	}
	if st.SupervisorPID != second || st.Restarts != 2 || st.LastTermination == nil ||
		!strings.Contains(st.LastTermination.Message, "kubelet (pid "+itoa(first)+")") {
		t.Errorf("after the kubelet's restart: %+v", st)
	}

	// The spec goes: the sync returns once the process has stopped.
	if err := RemoveSpec(f.store, "node1", spec.Name); err != nil {
		t.Fatal(err)
	}
	f.sync()
	if process.Alive(st.PID) {
		t.Errorf("pid %d runs on after its spec was removed and the kubelet synced", st.PID)
	}
}
