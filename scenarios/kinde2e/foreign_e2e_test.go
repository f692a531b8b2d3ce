package kinde2e

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/cni"
)

// e2eForeign runs `svclab conformance` on a cluster that does not look
// like svclab's defaults (clusters/kind/foreign.yaml: kube-proxy with
// masqueradeAll and detectLocalMode InterfaceNamePrefix, images from a
// registry), as a platform team would on a cluster of its own — the
// issue's proofs (a), (b), (e) and (f):
//
//   - svclab's image pushed to a real OCI registry (go-containerregistry's,
//     served where the nodes reach it), nothing preloaded: a wrong
//     reference fails within 2 minutes with the pull error in JUnit;
//   - SIGKILL in the middle of --disruptive's mode switch: `svclab
//     conformance cleanup` restores the ConfigMap and the mode, and leaves
//     no object of the suite;
//   - in-cluster, as the Job `svclab conformance manifest` prints, with
//     only the RBAC it prints and the digest reference: the suite passes,
//     JUnit read from the Job's log.
func e2eForeign(t *testing.T, bin, artifacts string) {
	const name = "e2e-foreign"
	start := time.Now()
	run(t, bin, "create", "cluster", "--config", filepath.Join("..", "..", "clusters", "kind", "foreign.yaml"), "--name", name, "--cni", cni.CalicoProxyARP)
	defer run(t, bin, "delete", "cluster", "--name", name)
	t.Logf("MEASURE foreign cluster created: %s", time.Since(start).Round(time.Second))
	f := foreignCluster{t: t, bin: bin, c: clusterOf(t, name), kubeconfig: kubeconfigOf(t, name)}

	startRegistry(t)
	ref := f.push()
	t.Logf("svclab's image in the test registry: %s", ref)

	t.Run("a wrong reference fails within 2 minutes with the pull error in JUnit", func(t *testing.T) {
		junit := filepath.Join(artifacts, "junit-kind-foreign-wrong-image.xml")
		wrong := registryAddr.String() + "/svclab@sha256:" + strings.Repeat("0", 64)
		start := time.Now()
		out, err := runErr(bin, f.conformance("--image", wrong, "--junit", junit, "--tolerate-all")...)
		took := time.Since(start)
		t.Logf("MEASURE a wrong image reference failed after %s", took.Round(time.Second))
		if err == nil {
			t.Fatalf("the suite passed with image %s:\n%s", wrong, lastLines(out, 30))
		}
		if took > 2*time.Minute {
			t.Errorf("the pull failure took %s to report, want under 2 minutes", took.Round(time.Second))
		}
		report, rerr := os.ReadFile(junit)
		if rerr != nil {
			t.Fatalf("no JUnit after a failed set-up: %v\n%s", rerr, lastLines(out, 30))
		}
		if !bytes.Contains(report, []byte("ErrImagePull")) && !bytes.Contains(report, []byte("ImagePullBackOff")) {
			t.Errorf("%s does not hold the kubelet's pull error:\n%s", junit, report)
		}
	})

	t.Run("SIGKILL in the disruptive mode switch, then cleanup restores the ConfigMap and the mode", func(t *testing.T) {
		f.killedModeSwitchIsCleanedUp(ref)
	})

	// The whole suite, with the digest reference from the registry, in
	// the cluster: (a), (b) and (f) at once. (Runs from outside with
	// --kubeconfig are e2eOtherProxy's and the real flannel's.)
	t.Run("the suite passes in-cluster as a Job with only the printed RBAC", func(t *testing.T) {
		f.asAJob(ref, filepath.Join(artifacts, "junit-kind-foreign-job.xml"))
		f.nothingOfTheSuiteLeft()
	})
}

// foreignCluster is the cluster e2eForeign tests, with the svclab binary.
type foreignCluster struct {
	t          *testing.T
	bin        string
	c          kind.Cluster
	kubeconfig string
}

// conformance is `svclab conformance` on the cluster, reached from
// svclab's dockerd namespace, with more arguments.
func (f foreignCluster) conformance(args ...string) []string {
	return append([]string{"conformance", "--kubeconfig", f.kubeconfig, "--netns", kind.DockerNamespace}, args...)
}

// push builds svclab's image from the binaries under test and pushes it to
// the test registry from svclab's dockerd namespace (the registry's only
// network), returning the digest reference `svclab image push` prints.
func (f foreignCluster) push() string {
	f.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("ip", "netns", "exec", kind.DockerNamespace, f.bin, "image", "push", "--insecure", registryAddr.String()+"/svclab")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		f.t.Fatalf("svclab image push: %v\n%s", err, stderr.String())
	}
	ref := strings.TrimSpace(stdout.String())
	if !strings.Contains(ref, "@sha256:") || strings.Contains(ref, "\n") {
		f.t.Fatalf("svclab image push printed %q, want one digest reference", ref)
	}
	return ref
}

// kubectl runs kubectl on the control-plane node with the admin
// kubeconfig, stdin from in.
func (f foreignCluster) kubectl(in string, args ...string) (string, error) {
	node := f.c.Name + "-control-plane"
	cmd := exec.Command("docker", append([]string{"exec", "-i", node, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf"}, args...)...)
	cmd.Env = os.Environ()
	if f.c.DockerHost != "" {
		cmd.Env = append(cmd.Env, "DOCKER_HOST="+f.c.DockerHost)
	}
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (f foreignCluster) mustKubectl(in string, args ...string) string {
	f.t.Helper()
	out, err := f.kubectl(in, args...)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// proxyConfig is kube-proxy's config.conf in kubeadm's ConfigMap.
func (f foreignCluster) proxyConfig() string {
	f.t.Helper()
	return f.mustKubectl("", "-n", "kube-system", "get", "configmap", "kube-proxy", "-o", `jsonpath={.data.config\.conf}`)
}

// killedModeSwitchIsCleanedUp starts the Disruptive spec, SIGKILLs svclab
// and the suite once the ConfigMap says the other mode, then checks that
// `svclab conformance cleanup` puts the ConfigMap and the mode back and
// leaves nothing of the suite.
func (f foreignCluster) killedModeSwitchIsCleanedUp(ref string) {
	t := f.t
	original := f.proxyConfig()
	cmd := exec.Command(f.bin, f.conformance("--image", ref, "--disruptive", "--tolerate-all", "--label-filter", "Disruptive")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The switch has begun when the ConfigMap no longer says the original.
	changed := false
	deadline := time.Now().Add(10 * time.Minute)
	for !changed && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("the disruptive run ended (%v) before its mode switch was seen:\n%s", err, lastLines(out.String(), 60))
		case <-time.After(time.Second):
		}
		changed = f.proxyConfig() != original
	}
	if !changed {
		t.Fatalf("the ConfigMap did not change within 10 minutes:\n%s", lastLines(out.String(), 60))
	}
	// SIGKILL svclab and the suite it runs in a process group of its own.
	for _, pid := range childrenOf(cmd.Process.Pid) {
		syscall.Kill(-pid, syscall.SIGKILL) //nolint:errcheck // gone already is fine
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // gone already is fine
	<-done
	t.Logf("killed in the mode switch; its output:\n%s", lastLines(out.String(), 30))
	if strings.Contains(out.String(), "Ran ") || f.proxyConfig() == original {
		t.Fatalf("the run was not killed in its mode switch (it finished, or the ConfigMap was back): the proof needs a run that left it changed")
	}

	cleanup := run(t, f.bin, "conformance", "cleanup", "--kubeconfig", f.kubeconfig, "--netns", kind.DockerNamespace)
	t.Logf("svclab conformance cleanup:\n%s", cleanup)
	if !strings.Contains(cleanup, "restor") {
		t.Errorf("cleanup did not say it restored the ConfigMap:\n%s", cleanup)
	}
	if got := f.proxyConfig(); got != original {
		t.Errorf("after cleanup the ConfigMap says\n%s\nwant the original\n%s", got, original)
	}
	for _, node := range f.c.Nodes {
		mode := dockerExec(t, f.c, node, "curl", "-s", "http://127.0.0.1:10249/proxyMode")
		if strings.TrimSpace(mode) != "iptables" {
			t.Errorf("after cleanup /proxyMode on %s says %q, want iptables", node, mode)
		}
	}
	f.nothingOfTheSuiteLeft()
}

// nothingOfTheSuiteLeft: no object labelled as the suite's.
func (f foreignCluster) nothingOfTheSuiteLeft() {
	f.t.Helper()
	left := f.mustKubectl("", "get", "namespaces,configmaps,daemonsets,clusterroles,clusterrolebindings", "-A",
		"-l", "app.kubernetes.io/managed-by=svclab-conformance", "-o", "name")
	if strings.TrimSpace(left) != "" {
		f.t.Errorf("objects of the suite left:\n%s", left)
	}
}

// asAJob applies what `svclab conformance manifest` prints and waits for
// the Job; its log ends with the JUnit report.
func (f foreignCluster) asAJob(ref, junit string) {
	t := f.t
	manifest := run(t, f.bin, "conformance", "manifest", "--image", ref, "--tolerate-all")
	f.mustKubectl(manifest, "apply", "-f", "-")
	defer f.kubectl(manifest, "delete", "--ignore-not-found", "--wait", "-f", "-") //nolint:errcheck // reported by nothingOfTheSuiteLeft's callers
	start := time.Now()
	waitErr := f.jobFinished("svclab-conformance", "svclab-conformance", 40*time.Minute)
	logs, _ := f.kubectl("", "-n", "svclab-conformance", "logs", "job/svclab-conformance", "--tail=-1")
	t.Logf("MEASURE conformance as a Job: %s", time.Since(start).Round(time.Second))
	report := junitIn(logs)
	if report != "" {
		os.WriteFile(junit, []byte(report), 0o644) //nolint:errcheck // the log below has it too
	}
	if waitErr != nil {
		t.Fatalf("the Job did not complete: %v\n%s", waitErr, lastLines(logs, 80))
	}
	var suites struct {
		Failures int `xml:"failures,attr"`
		Tests    int `xml:"tests,attr"`
	}
	if err := xml.Unmarshal([]byte(report), &suites); err != nil || suites.Tests == 0 || suites.Failures != 0 {
		t.Errorf("the Job's JUnit (%d tests, %d failures, %v):\n%s", suites.Tests, suites.Failures, err, lastLines(logs, 40))
	}
}

// jobFinished watches a Job's conditions (`kubectl get -w`, one line per
// change, the first for the state it starts from) until one says it ended:
// Complete is nil, Failed is an error with the conditions. The watch ends by
// itself after bound (--request-timeout), so the kubectl inside the node
// never outlives the test.
func (f foreignCluster) jobFinished(ns, name string, bound time.Duration) error {
	node := f.c.Name + "-control-plane"
	cmd := exec.Command("docker", "exec", node, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf",
		"--request-timeout="+bound.String(), "-n", ns, "get", "job", name, "--watch",
		"-o", `jsonpath={.status.conditions[?(@.status=="True")].type}{"\n"}`)
	cmd.Env = os.Environ()
	if f.c.DockerHost != "" {
		cmd.Env = append(cmd.Env, "DOCKER_HOST="+f.c.DockerHost)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Wait()         //nolint:errcheck // the watch was killed below
	defer cmd.Process.Kill() //nolint:errcheck // it may have ended already
	lines := bufio.NewScanner(stdout)
	last := ""
	for lines.Scan() {
		last = lines.Text()
		types := strings.Fields(last)
		switch {
		case slices.Contains(types, "Complete"):
			return nil
		case slices.Contains(types, "Failed"):
			conds, _ := f.kubectl("", "-n", ns, "get", "job", name, "-o", "jsonpath={.status.conditions}")
			return fmt.Errorf("job %s/%s failed: %s", ns, name, conds)
		}
	}
	return fmt.Errorf("job %s/%s not finished: the watch ended (bound %s, last conditions %q): %s", ns, name, bound, last, strings.TrimSpace(stderr.String()))
}

// junitIn is the JUnit document in a log: from its XML declaration or
// <testsuites> to </testsuites>.
func junitIn(log string) string {
	begin := strings.Index(log, "<?xml")
	if begin < 0 {
		begin = strings.Index(log, "<testsuites")
	}
	end := strings.LastIndex(log, "</testsuites>")
	if begin < 0 || end < begin {
		return ""
	}
	return log[begin : end+len("</testsuites>")]
}

// childrenOf are a process's children (the suite svclab started): every
// process whose parent it is, from /proc/*/stat (a Go program forks from
// any of its threads, and /proc/PID/task/PID/children lists only the
// main thread's).
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so after the last ')'.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		if child, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
			out = append(out, child)
		}
	}
	return out
}
