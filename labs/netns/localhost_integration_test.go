package netns_test

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/network"
)

// webNodePort is threePods behind a NodePort Service on 30080.
const webNodePort = threePods + "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: NodePort, selector: {app: web}, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}\n"

// The rules upstream's iptables proxier writes with localhost node ports
// on (the KUBE-FIREWALL guard) and the jump that differs with them off.
const (
	kubeFirewallRule = `-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`
	nodePortsJump    = `-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`
	nodePortsJumpNo  = `-A KUBE-SERVICES ! -d 127.0.0.0/8 -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`
)

// TestIntegrationLocalhostNodePorts: with a new lab's ConfigMap (upstream's
// default localhostNodePorts: true) a NodePort answers on
// 127.0.0.1:<nodePort> inside the node, because the node's proxy set
// route_localnet=1 in the node's namespace — not in the client's, not in
// the host's. With localhostNodePorts: false the proxy leaves
// route_localnet alone and 127.0.0.1:<nodePort> is refused, while the
// node IP still serves the port.
func TestIntegrationLocalhostNodePorts(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	hostBefore := roottest.SnapshotHost()
	opts := netns.Options{Binary: roottest.SharedBinary(t)}
	name := roottest.UniqueName("lhnp")
	lab, _, err := netns.Create(context.Background(), writeFile(t, "lab.yaml", strings.ReplaceAll(topology, "NAME", name)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netns.Delete(name) })
	if err := lab.Apply(context.Background(), writeFile(t, "web.yaml", webNodePort), opts); err != nil {
		t.Fatal(err)
	}
	node := network.NamespaceName(name, "node1")
	inNode := func(args ...string) (string, error) {
		out, err := exec.Command("ip", append([]string{"netns", "exec", node}, args...)...).Output()
		return string(out), err
	}
	routeLocalnet := func(ns string) string {
		out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-n", "net.ipv4.conf.all.route_localnet").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	get := func(url string) (string, error) { return inNode("curl", "-s", "--max-time", "2", url) }

	// Default: localhost node ports.
	if got := routeLocalnet(node); got != "1" {
		t.Errorf("route_localnet in node1 = %s, want 1", got)
	}
	if got := routeLocalnet(network.NamespaceName(name, "client")); got != "0" {
		t.Errorf("route_localnet in the client = %s, want 0: only a node's proxy sets it", got)
	}
	if out, err := get("http://127.0.0.1:30080/hostname"); err != nil || !strings.HasPrefix(out, "web-") {
		t.Errorf("127.0.0.1:30080 inside node1: %q, %v; want a web pod's name", out, err)
	}
	filter, _ := inNode("iptables-save", "-t", "filter")
	nat := natRules(t, name, "node1")
	if !strings.Contains(filter, kubeFirewallRule+"\n") || !strings.Contains(nat, nodePortsJump) || strings.Contains(nat, nodePortsJumpNo) {
		t.Errorf("rules lack upstream's localhost node port rules:\n%s\n%s", filter, nat)
	}

	// localhostNodePorts: false, on a node whose route_localnet was never
	// set (the value a new namespace has).
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-proxy, namespace: kube-system}\ndata:\n  config.conf: |\n" +
		"    apiVersion: kubeproxy.config.k8s.io/v1alpha1\n    kind: KubeProxyConfiguration\n    clusterCIDR: 10.244.0.0/16\n    iptables: {localhostNodePorts: false}\n"
	if err := lab.Apply(context.Background(), writeFile(t, "cm.yaml", cm), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := inNode("sysctl", "-qw", "net.ipv4.conf.all.route_localnet=0"); err != nil {
		t.Fatal(err)
	}
	if err := lab.RestartProxies(context.Background(), []string{"node1"}, opts); err != nil {
		t.Fatal(err)
	}
	if got := routeLocalnet(node); got != "0" {
		t.Errorf("route_localnet with localhostNodePorts false = %s, want 0 (left alone)", got)
	}
	if out, err := get("http://127.0.0.1:30080/hostname"); err == nil {
		t.Errorf("127.0.0.1:30080 answered %q with localhostNodePorts false", out)
	}
	if out, err := get("http://192.168.16.73:30080/hostname"); err != nil || !strings.HasPrefix(out, "web-") {
		t.Errorf("the node IP's port 30080: %q, %v", out, err)
	}
	if nat := natRules(t, name, "node1"); !strings.Contains(nat, nodePortsJumpNo) {
		t.Errorf("with localhostNodePorts false the KUBE-NODEPORTS jump lacks ! -d 127.0.0.0/8:\n%s", nat)
	}
	if err := netns.Delete(name); err != nil {
		t.Fatal(err)
	}
	if diff := hostBefore.Diff(roottest.SnapshotHost()); diff != "" {
		t.Errorf("the host's namespace changed:\n%s", diff)
	}
}

// TestIntegrationProxyModeTranscript is seed 002's transcript inside a lab
// node: `curl -v localhost:10249/proxyMode` tries ::1 first and is
// refused (the proxy serves its metrics on upstream's default
// 127.0.0.1:10249, and the node's lo has ::1), then connects to 127.0.0.1
// and reads "iptables" with the seed's headers.
//
// The seed's curl 8.5 resolves localhost itself to ::1 and 127.0.0.1 and
// tries IPv6 first; curl 7 takes the order from the resolver, which on
// many hosts (an /etc/hosts without ::1 localhost) is IPv4 only. On a
// curl older than 8 the test hands curl the seed's resolution with
// --resolve, so the transcript has the same shape on either.
func TestIntegrationProxyModeTranscript(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	opts := netns.Options{Binary: roottest.SharedBinary(t)}
	name := roottest.UniqueName("seed002")
	if _, _, err := netns.Create(context.Background(), writeFile(t, "lab.yaml", strings.ReplaceAll(topology, "NAME", name)), opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netns.Delete(name) })
	node := network.NamespaceName(name, "node1")

	if out, err := exec.Command("ip", "-n", node, "-6", "addr", "show", "dev", "lo").Output(); err != nil || !strings.Contains(string(out), "inet6 ::1/128") {
		t.Fatalf("node1's lo has no ::1 (%v):\n%s", err, out)
	}
	args := []string{"netns", "exec", node, "curl", "-v", "-s"}
	if curlMajor(t) < 8 {
		args = append(args, "--resolve", "localhost:10249:[::1],127.0.0.1")
	}
	cmd := exec.Command("ip", append(args, "localhost:10249/proxyMode")...)
	var trace strings.Builder
	cmd.Stderr = &trace
	body, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, trace.String())
	}
	if string(body) != "iptables" {
		t.Errorf("body %q, want iptables", body)
	}
	// The seed's lines, in order (curl's wording of the refusal differs
	// between versions only after "failed: Connection refused" and in
	// "from ::1 port N", so the pattern allows both).
	steps := []string{
		`(?m)^\*   Trying \[::1\]:10249\.\.\.$`,
		`(?m)^\* connect to ::1 port 10249 (from ::1 port \d+ )?failed: Connection refused$`,
		`(?m)^\*   Trying 127\.0\.0\.1:10249\.\.\.$`,
		`(?m)^\* Connected to localhost \(127\.0\.0\.1\) port 10249`,
		`(?m)^> GET /proxyMode HTTP/1\.1\r?$`,
		`(?m)^< HTTP/1\.1 200 OK\r?$`,
		`(?m)^< Content-Type: text/plain; charset=utf-8\r?$`,
		`(?m)^< X-Content-Type-Options: nosniff\r?$`,
		`(?m)^< Content-Length: 8\r?$`,
	}
	rest := trace.String()
	for _, step := range steps {
		loc := regexp.MustCompile(step).FindStringIndex(rest)
		if loc == nil {
			t.Fatalf("curl -v lacks %s after what came before:\n%s", step, trace.String())
		}
		rest = rest[loc[1]:]
	}
}

// curlMajor is the major version of the curl that runs in a lab.
func curlMajor(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("curl", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(out)) // curl 7.88.1 (x86_64-pc-linux-gnu) ...
	if len(fields) < 2 {
		t.Fatalf("curl --version: %q", out)
	}
	major, err := strconv.Atoi(strings.SplitN(fields[1], ".", 2)[0])
	if err != nil {
		t.Fatalf("curl --version: %q", out)
	}
	return major
}
