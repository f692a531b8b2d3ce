package kinde2e

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/podnet"
	"github.com/svclab/svclab/scenarios/kit"
)

// serviceTypesManifest is the manifest, applied unchanged to a
// netns lab (scenarios) and here to a kind cluster: Namespace svctypes, a
// StatefulSet with its headless Service, a DaemonSet, web pods behind a
// LoadBalancer Service with source ranges, an external IP, an ExternalName
// and a ClientIP-affinity Service.
var serviceTypesManifest = filepath.Join("..", "..", "clusters", "workloads", "service-types-all.yaml")

// The manifest's namespace, its LoadBalancer Service's source range and
// its affinity timeout; the two outside clients, as a netns lab's
// "client" (in the range) and "outsider" (out of it).
const (
	svcTypesNS      = "svctypes"
	affinityTimeout = 10 * time.Second
	insideClient    = "192.168.55.230"
	outsideClient   = "192.168.66.10"
	externalIP      = "203.0.113.7"
)

// TestIntegrationKindServiceTypes runs the Service types' checks
// (e2eServiceTypes) on a cluster svclab created, named by
// SVCLAB_KIND_CLUSTER; it creates and deletes no cluster. `make e2e-kind`
// runs the same checks inside TestIntegrationKind.
func TestIntegrationKindServiceTypes(t *testing.T) {
	name := os.Getenv("SVCLAB_KIND_CLUSTER")
	if name == "" {
		t.Skip("set SVCLAB_KIND_CLUSTER to a cluster made with `svclab create cluster` to run the Service types' checks on it")
	}
	roottest.Require(t, "reaches a kind cluster on svclab's dockerd")
	bin, _ := e2eBinaries(t)
	e2eServiceTypes(t, bin, clusterOf(t, name))
}

// e2eServiceTypes applies the manifest unchanged to cluster c and
// asserts the traffic each Service implies: the LoadBalancer Service gets
// an address of the cluster's pool, which a client in its source range
// reaches from outside the cluster and one outside the range does not (the
// same client reaches the Service's NodePort); the ClientIP-affinity
// Service sends one client to one pod while the client is less than the
// timeout idle; the external IP answers on a node; the ExternalName and
// the headless Service have no proxy rules; the StatefulSet's pods keep
// their names; the DaemonSet runs one pod per node; an address comes back
// to the pool when its Service stops being a LoadBalancer.
func e2eServiceTypes(t *testing.T, bin string, c kind.Cluster) {
	manifest, err := os.ReadFile(serviceTypesManifest)
	if err != nil {
		t.Fatal(err)
	}
	k := kubectlIn(c)
	if out, err := k("", "delete", "namespace", svcTypesNS, "--ignore-not-found", "--timeout=2m"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := k(string(manifest), "apply", "-f", "-"); err != nil {
		t.Fatalf("applying %s: %v\n%s", serviceTypesManifest, err, out)
	}
	defer func() {
		if out, err := k("", "delete", "namespace", svcTypesNS, "--timeout=2m"); err != nil {
			t.Errorf("deleting namespace %s: %v\n%s", svcTypesNS, err, out)
		}
	}()
	for _, w := range []string{"statefulset/db", "deployment/web", "daemonset/agent"} {
		if out, err := k("", "-n", svcTypesNS, "rollout", "status", w, "--timeout=3m"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	web := podNames(t, k, "app=web")
	lbIP := waitIngress(t, k, "lb")

	t.Run("LoadBalancer gets an address of the pool", func(t *testing.T) {
		pool, err := podnet.ParseAddrRange(c.LoadBalancerPool)
		if err != nil {
			t.Fatalf("cluster %s's pool %q: %v", c.Name, c.LoadBalancerPool, err)
		}
		if !pool.Contains(lbIP) {
			t.Errorf("lb got %s, outside the pool %s", lbIP, pool)
		}
		mode := get(t, k, "service", "lb", "{.status.loadBalancer.ingress[0].ipMode}")
		if mode != "VIP" {
			t.Errorf("lb's ingress ipMode %q, want VIP", mode)
		}
	})

	t.Run("source ranges: a client in the range reaches the LB address, one outside does not", func(t *testing.T) {
		if c.LoadBalancerRoute == "" {
			t.Skip("the pool is routed only in svclab's dockerd's namespace; this cluster runs on a Docker of the user's")
		}
		for _, a := range []string{insideClient, outsideClient} {
			ipIn(t, "addr", "add", a+"/32", "dev", "lo")
			defer ipIn(t, "addr", "del", a+"/32", "dev", "lo")
		}
		target := netip.AddrPortFrom(lbIP, 80)
		in := outsideTraffic(t, bin, insideClient, target, 30)
		if in.Succeeded != 30 {
			t.Errorf("from %s (in the range) to %s: %s", insideClient, target, kit.DescribeTraffic(in))
		}
		for b := range in.Backends {
			if !slices.Contains(web, b) {
				t.Errorf("from %s to %s: backend %q is not a web pod (%v)", insideClient, target, b, web)
			}
		}
		out := outsideTraffic(t, bin, outsideClient, target, 5)
		if out.Succeeded != 0 {
			t.Errorf("from %s (outside the range) to %s: want every connection dropped: %s", outsideClient, target, kit.DescribeTraffic(out))
		}
		// The same client reaches the Service's NodePort on the node the
		// pool is routed to: only the LoadBalancer address is closed to it.
		via := strings.Fields(c.LoadBalancerRoute)[2] // "PREFIX via NODE-IP"
		nodePort := get(t, k, "service", "lb", "{.spec.ports[0].nodePort}")
		np := outsideTraffic(t, bin, outsideClient, netip.MustParseAddrPort(via+":"+nodePort), 5)
		if np.Succeeded != 5 {
			t.Errorf("from %s to the NodePort %s:%s: %s", outsideClient, via, nodePort, kit.DescribeTraffic(np))
		}
		t.Logf("from %s: %s; from %s: %s; NodePort: %s", insideClient, kit.DescribeTraffic(in), outsideClient, kit.DescribeTraffic(out), kit.DescribeTraffic(np))
	})

	t.Run("ClientIP affinity: one client reaches one pod until the timeout", func(t *testing.T) {
		clusterIP := get(t, k, "service", "sticky", "{.spec.clusterIP}")
		target := clusterIP + ":80"
		clients := podNames(t, k, "app=agent")
		for _, client := range clients {
			first := podTraffic(t, k, client, target, 20)
			// idle for half the timeout: the affinity holds
			time.Sleep(affinityTimeout / 2)
			second := podTraffic(t, k, client, target, 20)
			if first.Succeeded != 20 || second.Succeeded != 20 || len(first.Backends) != 1 || !maps1Equal(first.Backends, second.Backends) {
				t.Errorf("from pod %s to sticky %s: want all 40 connections, %s apart, on one pod: %s, then %s",
					client, target, affinityTimeout/2, kit.DescribeTraffic(first), kit.DescribeTraffic(second))
			}
			t.Logf("from pod %s: %s; %s later: %s", client, kit.DescribeTraffic(first), affinityTimeout/2, kit.DescribeTraffic(second))
		}
		if c.ProxyMode == "iptables" {
			// kube-proxy's iptables affinity: the recent match with the timeout
			rules := dockerExec(t, c, c.Name+"-control-plane", "iptables-save", "-t", "nat")
			want := fmt.Sprintf("--rcheck --seconds %d --reap", int(affinityTimeout.Seconds()))
			if !hasRule(rules, svcTypesNS+"/sticky", want) {
				t.Errorf("no iptables rule of svctypes/sticky with %q:\n%s", want, rules)
			}
		}
	})

	t.Run("external IP answers on a node", func(t *testing.T) {
		res := nodeTraffic(t, k, externalIP+":80", 10)
		if res.Succeeded != 10 {
			t.Errorf("from a node to %s:80: %s", externalIP, kit.DescribeTraffic(res))
		}
		for b := range res.Backends {
			if !slices.Contains(web, b) {
				t.Errorf("external IP: backend %q is not a web pod (%v)", b, web)
			}
		}
	})

	t.Run("ExternalName and headless Services have no proxy rules", func(t *testing.T) {
		if ip := get(t, k, "service", "cname", "{.spec.clusterIP}"); ip != "" {
			t.Errorf("cname has a cluster IP %q", ip)
		}
		if ip := get(t, k, "service", "db", "{.spec.clusterIP}"); ip != "None" {
			t.Errorf("db's cluster IP %q, want None", ip)
		}
		for _, node := range c.Nodes {
			rules := dockerExec(t, c, node, "iptables-save", "-t", "nat")
			if c.ProxyMode == "nftables" {
				rules = dockerExec(t, c, node, "nft", "list", "table", "ip", "kube-proxy")
			}
			if !strings.Contains(rules, svcTypesNS+"/lb") {
				t.Errorf("%s: no rule of svctypes/lb (is this the proxy's table?)", node)
			}
			for _, none := range []string{svcTypesNS + "/cname", svcTypesNS + "/db"} {
				if strings.Contains(rules, none) {
					t.Errorf("%s: a proxy rule names %s", node, none)
				}
			}
		}
	})

	t.Run("StatefulSet pods keep their names", func(t *testing.T) {
		if got := podNames(t, k, "app=db"); !slices.Equal(got, []string{"db-0", "db-1"}) {
			t.Fatalf("StatefulSet pods %v, want [db-0 db-1]", got)
		}
		uid := get(t, k, "pod", "db-0", "{.metadata.uid}")
		if out, err := k("", "-n", svcTypesNS, "delete", "pod", "db-0", "--timeout=2m"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if out, err := k("", "-n", svcTypesNS, "wait", "--for=condition=Ready", "pod/db-0", "--timeout=2m"); err != nil {
			t.Fatalf("db-0 did not come back: %v\n%s", err, out)
		}
		if again := get(t, k, "pod", "db-0", "{.metadata.uid}"); again == uid {
			t.Errorf("db-0 is the same pod (uid %s) after its deletion", uid)
		}
	})

	t.Run("DaemonSet runs one pod per node", func(t *testing.T) {
		nodes := strings.Fields(get(t, k, "pods", "", `{range .items[?(@.metadata.labels.app=="agent")]}{.spec.nodeName} {end}`))
		slices.Sort(nodes)
		if !slices.Equal(nodes, c.Nodes) {
			t.Errorf("agent pods on %v, want one on each of %v", nodes, c.Nodes)
		}
	})

	t.Run("an address returns to the pool when its Service stops being a LoadBalancer", func(t *testing.T) {
		lb2 := "apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: " + svcTypesNS + "}\nspec:\n  type: LoadBalancer\n  ports: [{port: 80}]\n"
		if out, err := k(fmt.Sprintf(lb2, "lb2"), "apply", "-f", "-"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		a2 := waitIngress(t, k, "lb2")
		if a2 == lbIP {
			t.Fatalf("lb2 got lb's address %s", a2)
		}
		if out, err := k("", "-n", svcTypesNS, "patch", "service", "lb2", "--type=merge", "-p", `{"spec":{"type":"ClusterIP"}}`); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		waitFor(t, "lb2's status to have no ingress", func() bool {
			return get(t, k, "service", "lb2", "{.status.loadBalancer.ingress}") == ""
		})
		if out, err := k(fmt.Sprintf(lb2, "lb3"), "apply", "-f", "-"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if a3 := waitIngress(t, k, "lb3"); a3 != a2 {
			t.Errorf("lb3 got %s, want %s, the lowest free address lb2 gave back", a3, a2)
		}
	})
}

// kubectlIn runs kubectl with the admin kubeconfig in c's control-plane
// node, stdin (if any) as its input.
func kubectlIn(c kind.Cluster) func(stdin string, args ...string) (string, error) {
	return func(stdin string, args ...string) (string, error) {
		cmd := exec.Command("docker", append([]string{"exec", "-i", c.Name + "-control-plane", "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf"}, args...)...)
		cmd.Env = os.Environ()
		if c.DockerHost != "" {
			cmd.Env = append(cmd.Env, "DOCKER_HOST="+c.DockerHost)
		}
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
		}
		return string(out), nil
	}
}

// get is a jsonpath of an object of the manifest's namespace (name "" is
// the list of that kind).
func get(t *testing.T, k func(string, ...string) (string, error), kind, name, jsonpath string) string {
	t.Helper()
	args := []string{"-n", svcTypesNS, "get", kind}
	if name != "" {
		args = append(args, name)
	}
	out, err := k("", append(args, "-o", "jsonpath="+jsonpath)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}

// podNames are the names of the namespace's pods with the label, sorted.
func podNames(t *testing.T, k func(string, ...string) (string, error), selector string) []string {
	t.Helper()
	out, err := k("", "-n", svcTypesNS, "get", "pods", "-l", selector, "-o", `jsonpath={range .items[*]}{.metadata.name} {end}`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	names := strings.Fields(out)
	slices.Sort(names)
	return names
}

// waitIngress waits for the load balancer to give a Service its address.
func waitIngress(t *testing.T, k func(string, ...string) (string, error), svc string) netip.Addr {
	t.Helper()
	var a netip.Addr
	waitFor(t, svc+"'s load balancer address", func() bool {
		var err error
		a, err = netip.ParseAddr(get(t, k, "service", svc, "{.status.loadBalancer.ingress[0].ip}"))
		return err == nil
	})
	return a
}

func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ipIn runs `ip` in svclab's dockerd's namespace, where the pool is
// routed (never in the host's).
func ipIn(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", append([]string{"-n", kind.DockerNamespace}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ip -n %s %s: %v\n%s", kind.DockerNamespace, strings.Join(args, " "), err, out)
	}
}

// outsideTraffic is n connections from svclab's dockerd's namespace (the
// kind network's outside) from the source address src.
func outsideTraffic(t *testing.T, bin, src string, target netip.AddrPort, n int) *traffic.Result {
	t.Helper()
	return trafficResult(t, exec.Command("ip", "netns", "exec", kind.DockerNamespace, bin, "traffic", "--raw",
		"--source", src, "--to", target.String(), "-c", fmt.Sprint(n), "--timeout", "2s"))
}

// podTraffic is n connections, one at a time, from a pod of the
// namespace (svclab's traffic client in the netexec image).
func podTraffic(t *testing.T, k func(string, ...string) (string, error), pod, target string, n int) *traffic.Result {
	t.Helper()
	out, err := k("", "-n", svcTypesNS, "exec", pod, "--", "/svclab", "traffic", "--raw", "--to", target, "-c", fmt.Sprint(n), "--parallel", "1", "--timeout", "2s")
	return decodeTraffic(t, out, err)
}

// nodeTraffic is n connections from a node's own network: from the
// svclab-loadbalancer pod (hostNetwork, svclab's image).
func nodeTraffic(t *testing.T, k func(string, ...string) (string, error), target string, n int) *traffic.Result {
	t.Helper()
	out, err := k("", "-n", "kube-system", "exec", "deploy/svclab-loadbalancer", "--", "svclab", "traffic", "--raw", "--to", target, "-c", fmt.Sprint(n), "--timeout", "2s")
	return decodeTraffic(t, out, err)
}

func trafficResult(t *testing.T, cmd *exec.Cmd) *traffic.Result {
	t.Helper()
	out, err := cmd.Output()
	return decodeTraffic(t, string(out), err)
}

func decodeTraffic(t *testing.T, out string, err error) *traffic.Result {
	t.Helper()
	if err != nil {
		t.Fatalf("traffic: %v\n%s", err, out)
	}
	var res traffic.Result
	if err := json.Unmarshal([]byte(out[max(strings.Index(out, "{"), 0):]), &res); err != nil {
		t.Fatalf("traffic's JSON: %v\n%s", err, out)
	}
	return &res
}

func maps1Equal(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// hasRule says whether a line of iptables-save names the Service and
// holds want.
func hasRule(rules, svc, want string) bool {
	for _, l := range strings.Split(rules, "\n") {
		if strings.Contains(l, svc) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}
