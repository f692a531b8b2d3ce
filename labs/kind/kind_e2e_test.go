package kind

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/dockerhost"
)

// kindRuns are the clusters `make e2e-kind` runs the conformance
// scenarios on through e2e-framework (scenarios/conformance,
// TestConformanceOnKind): the stock kube-proxy on both pod networks, one
// starting in iptables mode and one in nftables mode (each switches to the
// other and back).
var kindRuns = []struct{ config, cni string }{
	{"flannel-vxlan.yaml", cni.FlannelVXLAN},
	{"calico-proxyarp.yaml", cni.CalicoProxyARP},
}

// TestIntegrationKind is `make e2e-kind`: bad input first (nothing may be
// left), then the conformance suite on a kind cluster per pod network
// with the stock kube-proxy (e2e-framework creates and deletes them), then
// svclab's proxy on a cluster made with `svclab create cluster`, tested
// by `svclab conformance --kubeconfig` as a cluster it did not create,
// and deleted with `svclab delete cluster`. JUnit reports go to
// $SVCLAB_ARTIFACTS (default _out/). At the end the host is as it was:
// links, addresses, routes, iptables, sysctls, no namespace, no daemon.
func TestIntegrationKind(t *testing.T) {
	if os.Getenv("SVCLAB_E2E_KIND") != "1" {
		t.Skip("set SVCLAB_E2E_KIND=1 to run the kind end-to-end test (`make e2e-kind`; minutes, a cold image build ~10 min)")
	}
	roottest.Require(t, "runs dockerd and kind clusters")
	if others, _ := List(t.Context()); len(others) > 0 {
		t.Fatalf("kind clusters exist already (%v): the end-to-end test needs a host without svclab clusters", others)
	}
	bin := e2eBinary(t)
	artifacts := os.Getenv("SVCLAB_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join("..", "..", "_out")
	}
	artifacts, _ = filepath.Abs(artifacts)
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	hostBefore := roottest.SnapshotHost()
	sysctlsBefore, err := dockerhost.SnapshotSysctls()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("bad input builds nothing", func(t *testing.T) { e2eBadInput(t, bin) })

	for _, run := range kindRuns {
		t.Run("conformance/"+strings.TrimSuffix(run.config, ".yaml"), func(t *testing.T) {
			junit := filepath.Join(artifacts, "junit-kind-"+strings.TrimSuffix(run.config, ".yaml")+".xml")
			start := time.Now()
			cmd := exec.Command(goCommand(), "test", "-v", "-count=1", "-timeout", "40m", "-run", "^TestConformanceOnKind$",
				"./scenarios/conformance", "-args", "-ginkgo.junit-report="+junit, "-ginkgo.v")
			cmd.Dir = filepath.Join("..", "..")
			cmd.Env = append(os.Environ(), "SVCLAB_E2E_KIND=1", "SVCLAB_BIN="+bin,
				"SVCLAB_KIND_CONFIG=clusters/kind/"+run.config, "SVCLAB_KIND_CNI="+run.cni, "SVCLAB_KIND_PROXY="+ProxyStock)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			err := cmd.Run()
			t.Logf("MEASURE conformance on kind %s (create, 8 specs, delete): %s; report %s", run.config, time.Since(start).Round(time.Second), junit)
			if err != nil {
				t.Fatalf("conformance on kind %s: %v", run.config, err)
			}
		})
	}

	t.Run("conformance/svclab-proxy via the CLI", func(t *testing.T) {
		const name = "e2e-svclab-proxy"
		junit := filepath.Join(artifacts, "junit-kind-svclab-proxy.xml")
		start := time.Now()
		run(t, bin, "create", "cluster", "--config", filepath.Join("..", "..", "clusters", "kind", "svclab-proxy.yaml"), "--name", name, "--proxy", ProxySvclab)
		defer run(t, bin, "delete", "cluster", "--name", name)
		kubeconfig := kubeconfigPath(name)
		out, err := runErr(bin, "conformance", "--kubeconfig", kubeconfig, "--netns", dockerhost.Namespace,
			"--pull-policy", "Never", "--junit", junit)
		t.Logf("MEASURE svclab proxy cluster: create + conformance: %s; report %s", time.Since(start).Round(time.Second), junit)
		if err != nil {
			t.Fatalf("svclab conformance on %s: %v\n%s", name, err, out)
		}
	})

	// Nothing is left.
	if cs, _ := List(t.Context()); len(cs) > 0 {
		t.Fatalf("clusters left: %v", cs)
	}
	if _, err := os.Stat("/run/netns/" + dockerhost.Namespace); err == nil {
		t.Errorf("namespace %s left after the last cluster was deleted", dockerhost.Namespace)
	}
	if dockerhost.Leftovers() {
		t.Errorf("svclab's dockerd left something behind")
	}
	if diff := hostBefore.Diff(roottest.SnapshotHost()); diff != "" {
		t.Errorf("the host's root namespace changed:\n%s", diff)
	}
	sysctlsAfter, err := dockerhost.SnapshotSysctls()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sysctlsBefore {
		if sysctlsAfter[k] != v {
			t.Errorf("sysctl %s: %q before, %q after", k, strings.TrimSpace(v), strings.TrimSpace(sysctlsAfter[k]))
		}
	}
}

// e2eBadInput: a kind config with an unknown field, an unreachable
// kubeconfig — clear errors naming the file, and nothing is built.
func e2eBadInput(t *testing.T, bin string) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad-kind.yaml")
	os.WriteFile(bad, []byte("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnetworking:\n  podSubnett: 10.244.0.0/16\n"), 0o644)
	out, err := runErr(bin, "create", "cluster", "--config", bad, "--name", "e2e-bad")
	if err == nil || !strings.Contains(out, bad) || !strings.Contains(out, "podSubnett") {
		t.Errorf("create cluster with an unknown field: err %v, output %q: want an error naming %s and podSubnett", err, out, bad)
	}
	unreachable := filepath.Join(dir, "unreachable.kubeconfig")
	os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600)
	out, err = runErr(bin, "conformance", "--kubeconfig", unreachable)
	if err == nil || !strings.Contains(out, unreachable) || !strings.Contains(out, "does not answer") {
		t.Errorf("conformance with an unreachable kubeconfig: err %v, output %q: want an error naming the file and saying the server does not answer", err, out)
	}
	if _, err := os.Stat("/run/netns/" + dockerhost.Namespace); err == nil {
		t.Errorf("bad input started svclab's dockerd (namespace %s exists)", dockerhost.Namespace)
	}
}

func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := runErr(bin, args...)
	if err != nil {
		t.Fatalf("svclab %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(bin string, args ...string) (string, error) {
	var b bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// e2eBinary is the svclab binary the cluster's images are made from:
// $SVCLAB_BIN, else one built now.
func e2eBinary(t *testing.T) string {
	if b := os.Getenv("SVCLAB_BIN"); b != "" {
		return b
	}
	out := filepath.Join(t.TempDir(), "svclab")
	cmd := exec.Command("go", "build", "-o", out, "github.com/svclab/svclab/tools/svclab")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build svclab: %v\n%s", err, b)
	}
	return out
}

// goCommand is $GO (the Makefile's), else go.
func goCommand() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}
