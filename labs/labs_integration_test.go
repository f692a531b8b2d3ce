package labs_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs"
	"github.com/svclab/svclab/labs/network"
	"github.com/svclab/svclab/labs/process"
)

const topology = `
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
  clients:
  - {name: client, ip: 192.168.55.230/24}
`

const threePods = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: svclab/netexec:dev, ports: [{containerPort: 8080}]}]
`

var (
	binaryOnce sync.Once
	binary     string
	binaryErr  error
)

func svclabBinary(tb testing.TB) string {
	tb.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "svclab-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binary, binaryErr = roottest.Binary(dir)
	})
	if binaryErr != nil {
		tb.Fatal(binaryErr)
	}
	return binary
}

func writeFile(tb testing.TB, name, content string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// assertGone checks that nothing of the lab is left: no namespace, no
// state, no process.
func assertGone(t *testing.T, name string) {
	t.Helper()
	ns, err := network.Namespaces(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) > 0 {
		t.Errorf("lab %s left namespaces %v", name, ns)
	}
	if labstore.Open(name).Exists() {
		t.Errorf("lab %s left its state directory", name)
	}
	if _, err := os.Stat(labstore.Open(name).Dir); err == nil {
		t.Errorf("lab %s left %s", name, labstore.Open(name).Dir)
	}
}

func TestIntegrationBadTopologiesBuildNothing(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	cases := []struct{ name, edit, want string }{
		{"malformed", "nodes:\n  - {name: node1, ip: [oops", "topology"},
		{"overlapping", "podCIDR: 10.244.1.0/24", "spec.nodes[0]"},
		{"shared pod CIDR", "  clients:", "spec.nodes[1].podCIDR"},
		{"unknown mode", "proxy: {mode: iptables}", "spec.proxy.mode"},
		{"unknown field", "cni: flannel-vxlan", "spec.colour"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := roottest.UniqueName("bad")
			topo := strings.ReplaceAll(topology, "NAME", name)
			switch tc.name {
			case "malformed":
				topo = strings.Replace(topo, "nodes:\n  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}", tc.edit, 1)
			case "overlapping":
				topo = strings.Replace(topo, tc.edit, "podCIDR: 192.168.16.0/24", 1)
			case "shared pod CIDR":
				topo = strings.Replace(topo, tc.edit, "  - {name: node2, ip: 192.168.16.74/20, podCIDR: 10.244.1.0/24}\n  clients:", 1)
			case "unknown mode":
				topo = strings.Replace(topo, tc.edit, "proxy: {mode: userspace}", 1)
			case "unknown field":
				topo = strings.Replace(topo, tc.edit, "cni: flannel-vxlan\n  colour: blue", 1)
			}
			file := writeFile(t, "lab.yaml", topo)
			_, _, err := labs.Create(context.Background(), file, labs.Options{Binary: svclabBinary(t)})
			if err == nil {
				labs.Delete(name)
				t.Fatalf("Create accepted a bad topology:\n%s", topo)
			}
			if !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q should name the file and %q", err, tc.want)
			}
			assertGone(t, name)
		})
	}
}

func TestIntegrationCreateApplyDelete(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	name := roottest.UniqueName("life")
	file := writeFile(t, "lab.yaml", strings.ReplaceAll(topology, "NAME", name))
	opts := labs.Options{Binary: svclabBinary(t)}
	lab, took, err := labs.Create(context.Background(), file, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { labs.Delete(name) })
	t.Logf("bring-up took %s", took)
	if _, _, err := labs.Create(context.Background(), file, opts); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second Create of the same lab: %v, want 'already exists'", err)
	}
	if err := lab.Apply(context.Background(), writeFile(t, "web.yaml", threePods), opts); err != nil {
		t.Fatal(err)
	}
	if h := lab.Health(); h != "running" {
		t.Errorf("health %q", h)
	}
	// A manifest that does not validate changes nothing.
	nsBefore, _ := network.Namespaces(name)
	bad := writeFile(t, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: extra}\nspec: {containers: [{name: c, image: x, ports: [{containerPort: 80}]}]}\n---\n"+
		"apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {type: NodePort, ports: [{port: 80, nodePort: 80}]}\n")
	if err := lab.Apply(context.Background(), bad, opts); err == nil || !strings.Contains(err.Error(), "nodePort 80: outside the node port range") {
		t.Errorf("bad nodePort: %v", err)
	}
	objs, _, _ := lab.Store.ReadObjects()
	if len(objs.Services) != 0 || len(objs.Pods) != 3 {
		t.Errorf("after a rejected apply: %d services, %d pods", len(objs.Services), len(objs.Pods))
	}
	if nsAfter, _ := network.Namespaces(name); len(nsAfter) != len(nsBefore) {
		t.Errorf("a rejected apply built something: namespaces %v, then %v", nsBefore, nsAfter)
	}
	namespaces, _ := network.Namespaces(name)
	if pids := process.InNamespaces(namespaces); len(pids) != 4 {
		t.Errorf("want 4 processes (1 proxy, 3 pod servers), found %v", pids)
	}
	if err := labs.Delete(name); err != nil {
		t.Fatal(err)
	}
	if pids := process.InNamespaces(namespaces); len(pids) != 0 {
		t.Errorf("processes left after delete: %v", pids)
	}
	assertGone(t, name)
	if err := labs.Delete(name); err != nil {
		t.Errorf("a second delete: %v (must be idempotent)", err)
	}
}

func TestIntegrationDeleteCleansACrashedLab(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	name := roottest.UniqueName("crash")
	file := writeFile(t, "lab.yaml", strings.ReplaceAll(topology, "NAME", name))
	opts := labs.Options{Binary: svclabBinary(t)}
	lab, _, err := labs.Create(context.Background(), file, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { labs.Delete(name) })
	if err := lab.Apply(context.Background(), writeFile(t, "web.yaml", threePods), opts); err != nil {
		t.Fatal(err)
	}
	// The crash: the proxy is killed, pid files and the state are lost.
	syscall.Kill(lab.ProxyPID("node1"), syscall.SIGKILL)
	os.RemoveAll(lab.Store.Dir)
	found, err := labs.List()
	if err != nil {
		t.Fatal(err)
	}
	if !contains(found, name) {
		t.Errorf("List does not show the crashed lab %s: %v", name, found)
	}
	if err := labs.Delete(name); err != nil {
		t.Fatal(err)
	}
	assertGone(t, name)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// BenchmarkBringUp measures what `svclab create lab` and one apply take for
// the goal: a 1-node lab with a client and 3 pods serving, with the
// proxy's rules in place (goal: under 1 s on 2 cores).
func BenchmarkBringUp(b *testing.B) {
	roottest.Require(b, "creates network namespaces")
	opts := labs.Options{Binary: svclabBinary(b)}
	manifest := writeFile(b, "web.yaml", threePods)
	benchBringUp(b, opts, "bench", func(name string) string { return strings.ReplaceAll(topology, "NAME", name) }, manifest)
}

// benchBringUp times Create + Apply of a fresh lab per iteration (the
// delete is not timed).
func benchBringUp(b *testing.B, opts labs.Options, prefix string, topo func(name string) string, manifest string) {
	for i := 0; i < b.N; i++ {
		name := roottest.UniqueName(prefix)
		lab, _, err := labs.Create(context.Background(), writeFile(b, "lab.yaml", topo(name)), opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := lab.Apply(context.Background(), manifest, opts); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := labs.Delete(name); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// TestIntegrationBadProxyConfigKeepsRules is the ConfigMap mistake an
// operator makes: an unknown mode. The restarted proxy reports it clearly,
// /healthz says unhealthy, and the node keeps its last good rules; fixing
// the ConfigMap and restarting again recovers.
func TestIntegrationBadProxyConfigKeepsRules(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	name := roottest.UniqueName("badcfg")
	opts := labs.Options{Binary: svclabBinary(t)}
	lab, _, err := labs.Create(context.Background(), writeFile(t, "lab.yaml", strings.ReplaceAll(topology, "NAME", name)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { labs.Delete(name) })
	svc := threePods + "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}\n"
	if err := lab.Apply(context.Background(), writeFile(t, "web.yaml", svc), opts); err != nil {
		t.Fatal(err)
	}
	rules := func() string {
		out, err := exec.Command("ip", "netns", "exec", network.NamespaceName(name, "node1"), "iptables-save", "-t", "nat").Output()
		if err != nil {
			t.Fatal(err)
		}
		var keep []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "-A") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	good := rules()
	setMode := func(mode string) {
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-proxy, namespace: kube-system}\ndata:\n  config.conf: |\n    apiVersion: kubeproxy.config.k8s.io/v1alpha1\n    kind: KubeProxyConfiguration\n    clusterCIDR: 10.244.0.0/16\n    metricsBindAddress: 0.0.0.0:10249\n    mode: %q\n", mode)
		if err := lab.Apply(context.Background(), writeFile(t, "cm.yaml", cm), opts); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []struct{ conf, want string }{
		{"", `kube-system/kube-proxy config.conf: mode "foo": unknown proxy mode`}, // setMode("foo") below
		{"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: [iptables\n", "kube-system/kube-proxy config.conf"},
		{"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\niptables: {masqueradeBits: 14}\n", "iptables.masqueradeBits: unknown field"},
	} {
		if bad.conf == "" {
			setMode("foo")
		} else {
			cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-proxy, namespace: kube-system}\ndata:\n  config.conf: |\n    " + strings.ReplaceAll(strings.TrimRight(bad.conf, "\n"), "\n", "\n    ") + "\n"
			if err := lab.Apply(context.Background(), writeFile(t, "cm.yaml", cm), opts); err != nil {
				t.Fatal(err)
			}
		}
		err = lab.RestartProxies(context.Background(), []string{"node1"}, opts)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("restart with a bad config: %v, want an error saying %q", err, bad.want)
		}
		if after := rules(); after != good {
			t.Errorf("the rules changed after a bad configuration:\nbefore:\n%s\nafter:\n%s", good, after)
		}
		health, _ := exec.Command("ip", "netns", "exec", network.NamespaceName(name, "node1"), "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "localhost:10256/healthz").Output()
		if string(health) != "503" {
			t.Errorf("/healthz answered %q, want 503", health)
		}
		if h := lab.Health(); !strings.Contains(h, "unhealthy") {
			t.Errorf("lab health %q", h)
		}
	}
	setMode("")
	if err := lab.RestartProxies(context.Background(), []string{"node1"}, opts); err != nil {
		t.Fatal(err)
	}
	if after := rules(); after != good {
		t.Errorf("the rules differ after recovery:\nbefore:\n%s\nafter:\n%s", good, after)
	}
	if h := lab.Health(); h != "running" {
		t.Errorf("lab health after recovery %q", h)
	}
}

// BenchmarkBringUpNodePort measures the multi-node issue's goal: the 2-node
// canal lab of seed 004 with its client and one pod serving behind a
// NodePort Service, rules synced on both nodes (goal: under 1 s).
func BenchmarkBringUpNodePort(b *testing.B) {
	roottest.Require(b, "creates network namespaces")
	opts := labs.Options{Binary: svclabBinary(b)}
	_, file, _, _ := runtime.Caller(0)
	clusters := filepath.Join(filepath.Dir(file), "..", "clusters")
	topo, err := os.ReadFile(filepath.Join(clusters, "nodeport.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	manifest := filepath.Join(clusters, "workloads", "httpserver.yaml")
	benchBringUp(b, opts, "benchnp", func(name string) string {
		return strings.Replace(string(topo), "name: nodeport", "name: "+name, 1)
	}, manifest)
}
