package kind

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/dockerhost"
	"github.com/svclab/svclab/labs/kind/nodeimage"
	"github.com/svclab/svclab/labs/roottest"
)

// e2eWorkload: two netexec pods (one per node: they tolerate the
// control-plane taint and avoid each other), a NodePort Service in front,
// and a client pod with curl (kube-proxy's image: the node's Debian with
// curl, preloaded on every node).
const e2eWorkload = `apiVersion: apps/v1
kind: Deployment
metadata: {name: netexec}
spec:
  replicas: 2
  selector: {matchLabels: {app: netexec}}
  template:
    metadata: {labels: {app: netexec}}
    spec:
      tolerations: [{operator: Exists}]
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: netexec}}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: netexec
        image: svclab/netexec:dev
        imagePullPolicy: Never
        args: [netexec, --http-port=8080]
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /hostname, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: netexec}
spec:
  type: NodePort
  selector: {app: netexec}
  ports: [{port: 80, targetPort: 8080, nodePort: 30080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  tolerations: [{operator: Exists}]
  containers:
  - name: client
    image: registry.k8s.io/kube-proxy:KUBERNETES_VERSION
    imagePullPolicy: Never
    command: [sleep, infinity]
`

// TestIntegrationKindClusters creates a two-node cluster per CNI variant
// (building the images first if they are missing), checks that a client
// pod's connections to a ClusterIP spread over both backend pods and that
// a NodePort answers from the host side (in svclab-docker's namespace),
// deletes the cluster and checks nothing is left.
func TestIntegrationKindClusters(t *testing.T) {
	if os.Getenv("SVCLAB_E2E_KIND") != "1" {
		t.Skip("set SVCLAB_E2E_KIND=1 to run the kind end-to-end test (it takes minutes; a cold image build ~10 min)")
	}
	roottest.Require(t, "runs dockerd and kind clusters")
	bin := e2eBinary(t)
	for _, variant := range cni.Variants {
		t.Run(variant, func(t *testing.T) { e2eCluster(t, bin, variant, ProxyStock, variant+".yaml") })
	}
	// svclab's proxy in place of kube-proxy (kubeProxyMode none).
	t.Run("svclab-proxy", func(t *testing.T) { e2eCluster(t, bin, cni.FlannelVXLAN, ProxySvclab, "svclab-proxy.yaml") })
}

func e2eCluster(t *testing.T, bin, variant, proxy, config string) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	name := "e2e-" + strings.Split(variant, "-")[0]
	if proxy == ProxySvclab {
		name = "e2e-svclab-proxy"
	}
	start := time.Now()
	c, err := Create(ctx, CreateOptions{
		ConfigFile: filepath.Join("..", "..", "clusters", "kind", config),
		Name:       name, CNI: variant, Proxy: proxy, SvclabBinary: bin, Out: testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("MEASURE create %s (cni %s, proxy %s): %s", name, variant, proxy, time.Since(start).Round(100*time.Millisecond))
	deleted := false
	defer func() {
		if !deleted {
			Delete(context.Background(), name, testLog{t})
		}
	}()
	d, ok := dockerhost.Running(ctx)
	if !ok {
		t.Fatal("no Docker daemon after Create")
	}
	// Bad input: the name is taken; the error says so and the cluster stays.
	if _, err := Create(ctx, CreateOptions{ConfigFile: filepath.Join("..", "..", "clusters", "kind", config), Name: name, CNI: variant, Proxy: proxy, SvclabBinary: bin}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second create with the name %s: got %v, want an 'already exists' error", name, err)
	}
	kubectl := func(stdin string, args ...string) string {
		t.Helper()
		a := append([]string{"exec", "-i", name + "-control-plane", "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf"}, args...)
		cmd := d.Command(a...)
		if stdin != "" {
			cmd = cmd.WithStdin(strings.NewReader(stdin))
		}
		out, err := cmd.Text(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	kubectl(strings.ReplaceAll(e2eWorkload, "KUBERNETES_VERSION", nodeimage.DefaultKubernetes), "apply", "-f", "-")
	kubectl("", "rollout", "status", "deployment/netexec", "--timeout=180s")
	kubectl("", "wait", "--for=condition=Ready", "pod/client", "--timeout=180s")
	t.Log(kubectl("", "get", "pods", "-o", "wide"))
	clusterIP := kubectl("", "get", "service", "netexec", "-o", "jsonpath={.spec.clusterIP}")

	// A client pod's connections spread over both pods.
	const n = 60
	out := kubectl("", "exec", "client", "--", "sh", "-c",
		fmt.Sprintf(`for i in $(seq %d); do curl -s --max-time 3 http://%s/hostname; echo; done`, n, clusterIP))
	counts := map[string]int{}
	for _, l := range strings.Fields(out) {
		counts[l]++
	}
	t.Logf("%d connections to %s:80 from the client pod: %v", n, clusterIP, counts)
	if len(counts) != 2 {
		t.Fatalf("connections reached %d backends (%v), want both pods", len(counts), counts)
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != n {
		t.Fatalf("%d of %d connections answered", total, n)
	}

	// The NodePort answers from the host side, on both nodes.
	for _, node := range c.Nodes {
		ip, err := d.Command("inspect", "-f", "{{.NetworkSettings.Networks.kind.IPAddress}}", node).Text(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.NetnsCommand("curl", "-s", "--max-time", "5", fmt.Sprintf("http://%s:30080/hostname", ip)).Text(ctx)
		if err != nil || !strings.HasPrefix(got, "netexec-") {
			t.Fatalf("NodePort %s:30080 from the host side: %q %v", ip, got, err)
		}
		t.Logf("NodePort %s:30080 (%s) answered from %s", ip, node, got)
	}

	// Delete, and nothing is left.
	d.Done()
	start = time.Now()
	if err := Delete(ctx, name, testLog{t}); err != nil {
		t.Fatal(err)
	}
	deleted = true
	t.Logf("MEASURE delete %s: %s", name, time.Since(start).Round(100*time.Millisecond))
	if d.Managed {
		if others, _ := List(ctx); len(others) == 0 {
			if _, err := os.Stat("/run/netns/" + dockerhost.Namespace); err == nil {
				t.Fatalf("namespace %s left after the last cluster was deleted", dockerhost.Namespace)
			}
			if dockerhost.Leftovers() {
				t.Fatalf("svclab's dockerd left something behind")
			}
		}
	} else if cs, _ := dockerhost.KindClusters(ctx, d); strings.Contains(strings.Join(cs, " "), name) {
		t.Fatalf("containers of %s left: %v", name, cs)
	}
	if d.Managed && exec.Command("ip", "link", "show", "docker0").Run() == nil {
		t.Fatalf("docker0 in the host's namespace")
	}
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

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
