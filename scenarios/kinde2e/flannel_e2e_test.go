package kinde2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/kind"
)

// e2eRealFlannel: `svclab create cluster --cni flannel` makes a cluster
// running upstream's kube-flannel.yml; `get clusters` says so; on every
// node the kube-flannel pod runs, flannel.1 is a VXLAN device with
// flannel's VNI and port, and flanneld wrote /run/flannel/subnet.env;
// the Service types' manifest gets the traffic each type implies, the
// LoadBalancer Service an address of svclab's load balancer
// (e2eServiceTypes); then `svclab conformance` runs the suite on it,
// unchanged.
func e2eRealFlannel(t *testing.T, bin, artifacts string) {
	const name = "e2e-flannel"
	junit := filepath.Join(artifacts, "junit-kind-flannel.xml")
	start := time.Now()
	out := run(t, bin, "create", "cluster", "--config", filepath.Join("..", "..", "clusters", "kind", "flannel.yaml"), "--name", name, "--cni", kind.CNIFlannel)
	t.Logf("MEASURE real flannel cluster: create %s\n%s", time.Since(start).Round(time.Second), lastLines(out, 30))
	defer run(t, bin, "delete", "cluster", "--name", name)

	list := run(t, bin, "get", "clusters")
	if !regexp.MustCompile(`(?m)^` + name + `\s+2\s+` + regexp.QuoteMeta(kind.DescribeCNI(kind.CNIFlannel))).MatchString(list) {
		t.Errorf("svclab get clusters does not say %s runs %q:\n%s", name, kind.DescribeCNI(kind.CNIFlannel), list)
	}
	c := clusterOf(t, name)
	checkFlannelOnNodes(t, c)
	t.Run("service types", func(t *testing.T) { e2eServiceTypes(t, bin, c) })

	kubeconfig := kubeconfigOf(t, name)
	t0 := time.Now()
	res, err := runErr(bin, "conformance", "--kubeconfig", kubeconfig, "--netns", kind.DockerNamespace,
		"--pull-policy", "Never", "--junit", junit, "--disruptive", "--tolerate-all")
	t.Logf("MEASURE real flannel cluster: conformance %s; create + conformance %s; report %s", time.Since(t0).Round(time.Second), time.Since(start).Round(time.Second), junit)
	if err != nil {
		t.Fatalf("svclab conformance on %s: %v\n%s", name, err, res)
	}
}

// checkFlannelOnNodes asserts what the acceptance names, on every
// node of c: a Running kube-flannel pod, flannel.1 (VXLAN, VNI 1, port
// 8472), /run/flannel/subnet.env with the manifest's network.
func checkFlannelOnNodes(t *testing.T, c kind.Cluster) {
	t.Helper()
	info, err := kind.Flannel()
	if err != nil {
		t.Fatal(err)
	}
	vni, port := info.VNI, info.Port
	cp := c.Name + "-control-plane"
	pods := dockerExec(t, c, cp, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "-n", info.Namespace, "get", "pods",
		"-l", "app=flannel", "-o", `jsonpath={range .items[*]}{.spec.nodeName} {.status.phase} {.spec.containers[0].image}{"\n"}{end}`)
	for _, node := range c.Nodes {
		want := fmt.Sprintf("%s Running %s", node, info.Image)
		if !strings.Contains(pods+"\n", want+"\n") {
			t.Errorf("no Running kube-flannel pod on %s (want %q):\n%s", node, want, pods)
		}
		link := dockerExec(t, c, node, "ip", "-d", "link", "show", info.Device)
		if !strings.Contains(link, fmt.Sprintf("vxlan id %d ", vni)) || !strings.Contains(link, fmt.Sprintf("dstport %d ", port)) {
			t.Errorf("%s on %s is not VXLAN VNI %d port %d:\n%s", info.Device, node, vni, port, link)
		}
		env := dockerExec(t, c, node, "cat", "/run/flannel/subnet.env")
		if !strings.Contains(env, "FLANNEL_NETWORK="+info.Network+"\n") || !strings.Contains(env, "FLANNEL_SUBNET=10.244.") {
			t.Errorf("/run/flannel/subnet.env on %s:\n%s", node, env)
		}
		t.Logf("%s: %s\n%s%s", node, strings.TrimSpace(strings.Split(link, "\n")[0]), link[strings.Index(link, "\n")+1:], env)
	}
}

// dockerExec runs a program in a node container (docker exec on the
// cluster's daemon) and returns its output.
func dockerExec(t *testing.T, c kind.Cluster, node string, args ...string) string {
	t.Helper()
	cmd := exec.Command("docker", append([]string{"exec", node}, args...)...)
	cmd.Env = os.Environ()
	if c.DockerHost != "" {
		cmd.Env = append(cmd.Env, "DOCKER_HOST="+c.DockerHost)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docker exec %s %s: %v\n%s", node, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// clusterOf is svclab's record of a cluster.
func clusterOf(t *testing.T, name string) kind.Cluster {
	t.Helper()
	cs, err := kind.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("cluster %s is not listed (%v)", name, cs)
	return kind.Cluster{}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
