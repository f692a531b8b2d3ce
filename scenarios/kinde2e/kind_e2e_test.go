package kinde2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/scenarios/conformance/cmdline"
)

// kindRuns are the clusters `make e2e-kind` runs the conformance
// scenarios on through e2e-framework (bin/svclab-conformance.test with
// -kind-config, from scenarios/conformance/e2e): the stock kube-proxy on
// both pod networks, one starting in iptables mode and one in nftables
// mode (each switches to the other and back); and a dual-stack cluster
// with the real flannel, where every spec runs in IPv4 and in IPv6 and the
// dual-stack specs run too (the suite reads the families from the kind
// config's networking.ipFamily).
var kindRuns = []struct{ config, cni string }{
	{"flannel-vxlan.yaml", cni.FlannelVXLAN},
	{"calico-proxyarp.yaml", cni.CalicoProxyARP},
	{"flannel-dual.yaml", kind.CNIFlannel},
}

// TestIntegrationKind is `make e2e-kind`: bad input first (nothing may be
// left), then the conformance suite on a kind cluster per pod network
// with the stock kube-proxy, --disruptive (e2e-framework creates and
// deletes them); then, through `svclab conformance --kubeconfig` as on
// clusters svclab did not create: svclab's proxy serving Services under
// another name without kube-proxy's ConfigMap (e2eOtherProxy), a foreign
// cluster with images from a registry and kube-proxy's masqueradeAll and
// InterfaceNamePrefix (e2eForeign: a wrong image, a killed disruptive run
// and its cleanup, a passing run, the in-cluster Job), and the real
// flannel (--cni flannel), whose DaemonSet, VXLAN device and subnet.env
// are checked on every node first, and where the Service types' manifest
// is applied unchanged and its traffic asserted (LoadBalancer address
// from svclab's load balancer, source ranges, ClientIP affinity…). JUnit
// reports go to $SVCLAB_ARTIFACTS (default _out/). At the end the host is
// as it was: links, addresses, routes, iptables, sysctls, no namespace,
// no daemon.
func TestIntegrationKind(t *testing.T) {
	if os.Getenv("SVCLAB_E2E_KIND") != "1" {
		t.Skip("set SVCLAB_E2E_KIND=1 to run the kind end-to-end test (`make e2e-kind`; minutes, a cold image build ~10 min)")
	}
	roottest.Require(t, "runs dockerd and kind clusters")
	if others, _ := kind.List(t.Context()); len(others) > 0 {
		t.Fatalf("kind clusters exist already (%v): the end-to-end test needs a host without svclab clusters", others)
	}
	bin, suite := e2eBinaries(t)
	artifacts := os.Getenv("SVCLAB_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join("..", "..", "_out")
	}
	artifacts, _ = filepath.Abs(artifacts)
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	hostBefore := roottest.SnapshotHost()
	sysctlsBefore, err := kind.HostSysctls()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("bad input builds nothing", func(t *testing.T) { e2eBadInput(t, bin) })

	for _, run := range kindRuns {
		t.Run("conformance/"+strings.TrimSuffix(run.config, ".yaml"), func(t *testing.T) {
			junit := filepath.Join(artifacts, "junit-kind-"+strings.TrimSuffix(run.config, ".yaml")+".xml")
			start := time.Now()
			config, _ := filepath.Abs(filepath.Join("..", "..", "clusters", "kind", run.config))
			cmd := exec.Command(suite, cmdline.Flags{
				KindConfig: config, KindCNI: run.cni, KindProxy: kind.ProxyStock, SvclabBinary: bin, Disruptive: true,
				JUnit: junit, Timeout: 40 * time.Minute, Verbose: true,
			}.Args()...)
			cmd.Dir = filepath.Join("..", "..")
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			err := cmd.Run()
			t.Logf("MEASURE conformance on kind %s (create, the specs, delete): %s; report %s", run.config, time.Since(start).Round(time.Second), junit)
			if err != nil {
				t.Fatalf("conformance on kind %s: %v", run.config, err)
			}
		})
	}

	t.Run("conformance/svclab's proxy as another proxy (no kube-proxy, no kubeadm ConfigMap) via the CLI", func(t *testing.T) { e2eOtherProxy(t, bin, artifacts) })

	t.Run("conformance/a foreign cluster (registry image, masqueradeAll, InterfaceNamePrefix) via the CLI", func(t *testing.T) { e2eForeign(t, bin, artifacts) })

	t.Run("conformance/flannel (the real one) via the CLI", func(t *testing.T) { e2eRealFlannel(t, bin, artifacts) })

	// Nothing is left.
	if cs, _ := kind.List(t.Context()); len(cs) > 0 {
		t.Fatalf("clusters left: %v", cs)
	}
	if _, err := os.Stat("/run/netns/" + kind.DockerNamespace); err == nil {
		t.Errorf("namespace %s left after the last cluster was deleted", kind.DockerNamespace)
	}
	if kind.DockerLeftovers() {
		t.Errorf("svclab's dockerd left something behind")
	}
	if diff := hostBefore.Diff(roottest.SnapshotHost()); diff != "" {
		t.Errorf("the host's root namespace changed:\n%s", diff)
	}
	sysctlsAfter, err := kind.HostSysctls()
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
	if _, err := os.Stat("/run/netns/" + kind.DockerNamespace); err == nil {
		t.Errorf("bad input started svclab's dockerd (namespace %s exists)", kind.DockerNamespace)
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

// kubeconfigOf is the kubeconfig file svclab wrote for a cluster it
// created (what `svclab create cluster` prints).
func kubeconfigOf(t *testing.T, name string) string {
	t.Helper()
	clusters, err := kind.List(t.Context())
	if err != nil {
		t.Fatalf("listing clusters: %v", err)
	}
	for _, c := range clusters {
		if c.Name == name && c.Kubeconfig != "" {
			return c.Kubeconfig
		}
	}
	t.Fatalf("no kubeconfig recorded for cluster %s (clusters: %v)", name, clusters)
	return ""
}

// e2eBinaries are the svclab binary the clusters' images are made from,
// and the conformance test binary: $SVCLAB_BIN and
// $SVCLAB_CONFORMANCE_BIN (`make e2e-kind` sets both), else the suite
// beside $SVCLAB_BIN, else built now. `svclab conformance` runs the same
// suite ($SVCLAB_CONFORMANCE_BIN is set for it).
func e2eBinaries(t *testing.T) (svclab, suite string) {
	dir := t.TempDir()
	svclab = os.Getenv("SVCLAB_BIN")
	if svclab == "" {
		svclab = filepath.Join(dir, "svclab")
		goBuild(t, "build", "-o", svclab, "./tools/svclab")
	}
	suite = os.Getenv(cmdline.BinaryEnv)
	if suite == "" {
		suite = filepath.Join(filepath.Dir(svclab), cmdline.Binary)
		if _, err := os.Stat(suite); err != nil {
			suite = filepath.Join(dir, cmdline.Binary)
			goBuild(t, "test", "-c", "-o", suite, "./scenarios/conformance/e2e")
		}
		t.Setenv(cmdline.BinaryEnv, suite)
	}
	return svclab, suite
}

// goBuild runs $GO (the Makefile's, else go) with args in the module's
// root.
func goBuild(t *testing.T, args ...string) {
	t.Helper()
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
}
