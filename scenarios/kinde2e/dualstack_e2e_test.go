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

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/scenarios/kit"
)

// ipStack is a kind cluster's IP families as the end-to-end test makes
// and checks it: its config (clusters/kind), its families in order (the
// primary first), the pod and Service subnets per family (kind's
// defaults, written out in the config; pods: a /24 or a /64 per node),
// and what the test's Service asks for.
type ipStack struct {
	name, config  string
	families      []corev1.IPFamily
	podSubnets    []netip.Prefix
	serviceRanges []netip.Prefix
	servicePolicy string
}

// The two stacks: dual (IPv4 first) and IPv6 alone.
var (
	dualStack = ipStack{
		name:          "dual",
		config:        filepath.Join("..", "..", "clusters", "kind", "flannel-dual.yaml"),
		families:      []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol},
		podSubnets:    []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fd00:10:244::/56")},
		serviceRanges: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00:10:96::/112")},
		servicePolicy: "ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv4, IPv6]",
	}
	ipv6Stack = ipStack{
		name:          "ipv6",
		config:        filepath.Join("..", "..", "clusters", "kind", "flannel-ipv6.yaml"),
		families:      []corev1.IPFamily{corev1.IPv6Protocol},
		podSubnets:    []netip.Prefix{netip.MustParsePrefix("fd00:10:244::/56")},
		serviceRanges: []netip.Prefix{netip.MustParsePrefix("fd00:10:96::/112")},
		servicePolicy: "ipFamilyPolicy: SingleStack\n  ipFamilies: [IPv6]",
	}
)

// nodeCIDRBits is the size of a node's podCIDR of a family (kube-
// controller-manager's defaults, which kind keeps).
func nodeCIDRBits(f corev1.IPFamily) int {
	if f == corev1.IPv6Protocol {
		return 64
	}
	return 24
}

// familyOf is an address's Kubernetes IP family.
func familyOf(a netip.Addr) corev1.IPFamily {
	if a.Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// dualStackNS is the namespace of the test's workload.
const dualStackNS = "dualstack"

// dualStackManifest: two netexec pods, one per node, behind a Service of
// the stack's families (SERVICE_POLICY), and a client pod with svclab's
// traffic client (the netexec image).
const dualStackManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: dualstack
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: dualstack
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      # one per node, the control plane too: the client's connections
      # cross the overlay (flannel.1, flannel-v6.1) to the other one
      tolerations:
      - {key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: web}}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: web
        image: svclab/netexec:dev
        ports:
        - {containerPort: 8080}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: dualstack
spec:
  SERVICE_POLICY
  selector: {app: web}
  ports:
  - {port: 80, targetPort: 8080, protocol: TCP}
---
apiVersion: v1
kind: Pod
metadata:
  name: client
  namespace: dualstack
spec:
  containers:
  - name: client
    image: svclab/netexec:dev
`

// ipStackRuns are the pod networks the test creates a cluster of per
// stack, one after the other: the real flannel and svclab's
// flannel-vxlan (flannel-v6.1 beside flannel.1, or alone).
var ipStackRuns = []string{kind.CNIFlannel, cni.FlannelVXLAN}

// TestIntegrationKindDualStack creates a dual-stack kind cluster
// (clusters/kind/flannel-dual.yaml) per pod network of ipStackRuns, with
// kind's kube-proxy in iptables mode, checks it (e2eIPStack) and deletes
// it. With SVCLAB_KIND_CLUSTER it checks that cluster instead (made from
// the same config) and creates none. Not in `make e2e-kind` yet; ~2.5
// min a cluster on a warm cache (create ~1.5 min, checks ~25 s, delete
// ~30 s).
func TestIntegrationKindDualStack(t *testing.T) { testIPStack(t, dualStack) }

// TestIntegrationKindIPv6 is TestIntegrationKindDualStack for IPv6-only
// clusters (clusters/kind/flannel-ipv6.yaml).
func TestIntegrationKindIPv6(t *testing.T) { testIPStack(t, ipv6Stack) }

// testIPStack creates, checks and deletes a cluster of the stack per pod
// network of ipStackRuns (or checks SVCLAB_KIND_CLUSTER's), and checks
// that the host's IPv6 state is as it was.
func testIPStack(t *testing.T, st ipStack) {
	if os.Getenv("SVCLAB_E2E_KIND") != "1" {
		t.Skip("set SVCLAB_E2E_KIND=1 to run the " + st.name + " kind end-to-end test (minutes)")
	}
	roottest.Require(t, "runs dockerd and a kind cluster")
	if name := os.Getenv("SVCLAB_KIND_CLUSTER"); name != "" {
		e2eIPStack(t, clusterOf(t, name), st)
		return
	}
	bin := dualStackSvclabBinary(t)
	ipv6Before := hostIPv6State(t)
	for _, cniName := range ipStackRuns {
		t.Run(cniName, func(t *testing.T) {
			name := "e2e-" + st.name + "-" + cniName
			start := time.Now()
			out := run(t, bin, "create", "cluster", "--config", st.config, "--name", name, "--cni", cniName)
			t.Logf("MEASURE %s cluster (%s): create %s\n%s", st.name, cniName, time.Since(start).Round(time.Second), lastLines(out, 12))
			defer func() {
				t0 := time.Now()
				run(t, bin, "delete", "cluster", "--name", name)
				t.Logf("MEASURE %s cluster (%s): delete %s; all %s", st.name, cniName, time.Since(t0).Round(time.Second), time.Since(start).Round(time.Second))
			}()
			t0 := time.Now()
			e2eIPStack(t, clusterOf(t, name), st)
			t.Logf("MEASURE %s cluster (%s): checks %s", st.name, cniName, time.Since(t0).Round(time.Second))
		})
	}
	if after := hostIPv6State(t); after != ipv6Before {
		t.Errorf("the host's root namespace's IPv6 state changed (svclab's dockerd keeps the kind network's IPv6 in its own namespace):\nbefore:\n%s\nafter:\n%s", ipv6Before, after)
	}
}

// hostIPv6State is the root namespace's IPv6 addresses, routes, rules
// and forwarding sysctls (roottest.SnapshotHost holds IPv4's): the kind
// network's IPv6 subnet and the nodes' forwarding live in svclab-docker.
func hostIPv6State(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"ip", "-6", "-o", "addr", "show"},
		{"ip", "-6", "route", "show", "table", "all"},
		{"sysctl", "net.ipv6.conf.all.forwarding", "net.ipv6.conf.default.forwarding", "net.ipv6.conf.all.disable_ipv6"},
	} {
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		fmt.Fprintf(&b, "$ %s\n%s", strings.Join(args, " "), out)
	}
	return b.String()
}

// dualStackSvclabBinary is $SVCLAB_BIN, else svclab built now (the
// cluster's images are made of it).
func dualStackSvclabBinary(t *testing.T) string {
	if bin := os.Getenv("SVCLAB_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "svclab")
	goBuild(t, "build", "-o", bin, "./tools/svclab")
	return bin
}

// e2eIPStack: every node has an InternalIP and a podCIDR of each of the
// stack's families and flannel's VXLAN device of each; CoreDNS has an
// address of each; the Service gets a clusterIP from each Service range,
// kube-proxy writes the IPv6 one into ip6tables, and a pod reaches the
// Service over each family (TCP, through kube-proxy, both backends — one
// on each node — answering).
func e2eIPStack(t *testing.T, c kind.Cluster, st ipStack) {
	k := kubectlIn(c)
	t.Run("nodes have each family's InternalIP and podCIDR", func(t *testing.T) { checkStackNodes(t, c, k, st) })
	t.Run("flannel runs each family on every node", func(t *testing.T) { checkFlannelFamiliesOnNodes(t, c, st, c.CNI == kind.CNIFlannel) })
	t.Run("CoreDNS has each family's address", func(t *testing.T) {
		for _, pod := range dualStackPods(t, k, "kube-system", "k8s-app=kube-dns") {
			checkPodIPs(t, pod, st)
		}
	})

	manifest := strings.Replace(dualStackManifest, "SERVICE_POLICY", st.servicePolicy, 1)
	if out, err := k(manifest, "apply", "-f", "-"); err != nil {
		t.Fatalf("applying the %s workload: %v\n%s", st.name, err, out)
	}
	defer func() {
		if out, err := k("", "delete", "namespace", dualStackNS, "--timeout=2m"); err != nil {
			t.Errorf("deleting namespace %s: %v\n%s", dualStackNS, err, out)
		}
	}()
	for _, args := range [][]string{
		{"-n", dualStackNS, "rollout", "status", "deployment/web", "--timeout=3m"},
		{"-n", dualStackNS, "wait", "--for=condition=Ready", "pod/client", "--timeout=3m"},
	} {
		if out, err := k("", args...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	var web, webNodes []string
	for _, pod := range dualStackPods(t, k, dualStackNS, "app=web") {
		checkPodIPs(t, pod, st)
		web = append(web, pod.Name)
		webNodes = append(webNodes, pod.Spec.NodeName)
	}
	slices.Sort(web)
	slices.Sort(webNodes)
	if !slices.Equal(webNodes, c.Nodes) {
		t.Fatalf("web pods on nodes %v, want one on each of %v (so that traffic crosses the overlay)", webNodes, c.Nodes)
	}

	clusterIPs := stackClusterIPs(t, k, st)
	waitFor(t, "kube-proxy's rules to both web pods in every family on every node", func() bool {
		return kubeProxyHasEndpoints(t, c, st, len(web))
	})
	ipv6 := clusterIPs[len(clusterIPs)-1]
	t.Run("kube-proxy writes the IPv6 clusterIP into ip6tables", func(t *testing.T) {
		for _, node := range c.Nodes {
			rules := dockerExec(t, c, node, "ip6tables-save", "-t", "nat")
			if !hasRule(rules, dualStackNS+"/web", "-d "+ipv6.String()+"/128") {
				t.Errorf("%s's ip6tables nat table has no rule for %s/web to %s", node, dualStackNS, ipv6)
			}
		}
	})
	for _, ip := range clusterIPs {
		t.Run("a pod reaches the Service over "+string(familyOf(ip)), func(t *testing.T) {
			target := netip.AddrPortFrom(ip, 80).String()
			out, err := k("", "-n", dualStackNS, "exec", "client", "--", "/svclab", "traffic", "--raw", "--to", target, "-c", "30", "--parallel", "1", "--timeout", "2s")
			res := decodeTraffic(t, out, err)
			if res.Succeeded != 30 {
				t.Errorf("client to %s: %s", target, kit.DescribeTraffic(res))
			}
			var got []string
			for b := range res.Backends {
				got = append(got, b)
			}
			slices.Sort(got)
			if !slices.Equal(got, web) {
				t.Errorf("client to %s reached %v, want both web pods %v (kube-proxy's DNAT to each): %s", target, got, web, kit.DescribeTraffic(res))
			}
		})
	}
}

// kubeProxyHasEndpoints says whether kube-proxy's KUBE-SVC chain of the
// web Service jumps to n endpoints in the nat table of each family of
// the stack on every node (the pods are ready before kube-proxy has
// synced their EndpointSlices).
func kubeProxyHasEndpoints(t *testing.T, c kind.Cluster, st ipStack, n int) bool {
	t.Helper()
	save := map[corev1.IPFamily]string{corev1.IPv4Protocol: "iptables-save", corev1.IPv6Protocol: "ip6tables-save"}
	for _, node := range c.Nodes {
		for _, f := range st.families {
			jumps := 0
			for _, l := range strings.Split(dockerExec(t, c, node, save[f], "-t", "nat"), "\n") {
				if strings.HasPrefix(l, "-A KUBE-SVC-") && strings.Contains(l, dualStackNS+"/web") && strings.Contains(l, "-j KUBE-SEP-") {
					jumps++
				}
			}
			if jumps != n {
				return false
			}
		}
	}
	return true
}

// checkStackNodes: each node's InternalIPs and podCIDRs are one per
// family of the stack, in its order, the podCIDRs a /24 or a /64 of the
// pod subnets.
func checkStackNodes(t *testing.T, c kind.Cluster, k func(string, ...string) (string, error), st ipStack) {
	out, err := k("", "get", "nodes", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var nodes corev1.NodeList
	if err := json.Unmarshal([]byte(out), &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != len(c.Nodes) {
		t.Fatalf("%d nodes, want %d (%v)", len(nodes.Items), len(c.Nodes), c.Nodes)
	}
	for _, n := range nodes.Items {
		var internal []corev1.IPFamily
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				internal = append(internal, familyOf(netip.MustParseAddr(a.Address)))
			}
		}
		if !slices.Equal(internal, st.families) {
			t.Errorf("node %s: InternalIPs of %v, want %v (%v)", n.Name, internal, st.families, n.Status.Addresses)
		}
		if len(n.Spec.PodCIDRs) != len(st.families) {
			t.Errorf("node %s: podCIDRs %v, want one per family %v", n.Name, n.Spec.PodCIDRs, st.families)
			continue
		}
		for i, f := range st.families {
			p, err := netip.ParsePrefix(n.Spec.PodCIDRs[i])
			if err != nil || p.Bits() != nodeCIDRBits(f) || !st.podSubnets[i].Contains(p.Addr()) {
				t.Errorf("node %s: podCIDRs[%d] %s, want a /%d of %s", n.Name, i, n.Spec.PodCIDRs[i], nodeCIDRBits(f), st.podSubnets[i])
			}
		}
		t.Logf("node %s: InternalIPs %v, podCIDRs %v", n.Name, n.Status.Addresses, n.Spec.PodCIDRs)
	}
}

// checkFlannelFamiliesOnNodes: on every node flanneld (or svclab's
// flannel-vxlan agent, with flanneld's names) made the VXLAN device of
// each family of the stack — flannel.<VNI>, flannel-v6.<VNI> with the
// same VNI and port — and no other; the real flanneld wrote each family
// into /run/flannel/subnet.env.
func checkFlannelFamiliesOnNodes(t *testing.T, c kind.Cluster, st ipStack, real bool) {
	info, err := kind.Flannel()
	if err != nil {
		t.Fatal(err)
	}
	device := map[corev1.IPFamily]string{corev1.IPv4Protocol: info.Device, corev1.IPv6Protocol: info.DeviceIPv6}
	envLines := map[corev1.IPFamily][]string{
		corev1.IPv4Protocol: {"FLANNEL_NETWORK=", "FLANNEL_SUBNET="},
		corev1.IPv6Protocol: {"FLANNEL_IPV6_NETWORK=", "FLANNEL_IPV6_SUBNET="},
	}
	for _, node := range c.Nodes {
		links := dockerExec(t, c, node, "ip", "-br", "link", "show")
		for _, f := range []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol} {
			dev := device[f]
			has := slices.ContainsFunc(strings.Split(links, "\n"), func(l string) bool { return strings.HasPrefix(l, dev+" ") })
			if has != slices.Contains(st.families, f) {
				t.Errorf("%s on %s: present %v, want it for %v only:\n%s", dev, node, has, st.families, links)
				continue
			}
			if !has {
				continue
			}
			link := dockerExec(t, c, node, "ip", "-d", "link", "show", dev)
			if !strings.Contains(link, fmt.Sprintf("vxlan id %d ", info.VNI)) || !strings.Contains(link, fmt.Sprintf("dstport %d ", info.Port)) {
				t.Errorf("%s on %s is not VXLAN VNI %d port %d:\n%s", dev, node, info.VNI, info.Port, link)
			}
		}
		if !real {
			continue
		}
		env := dockerExec(t, c, node, "cat", "/run/flannel/subnet.env")
		for i, f := range st.families {
			network, subnet := envLines[f][0], envLines[f][1]
			if !strings.Contains(env, network+st.podSubnets[i].String()+"\n") || !strings.Contains(env, subnet) {
				t.Errorf("/run/flannel/subnet.env on %s has no %s%s or %s:\n%s", node, network, st.podSubnets[i], subnet, env)
			}
		}
	}
}

// dualStackPods are the pods of a namespace with a label.
func dualStackPods(t *testing.T, k func(string, ...string) (string, error), ns, selector string) []corev1.Pod {
	t.Helper()
	out, err := k("", "-n", ns, "get", "pods", "-l", selector, "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var pods corev1.PodList
	if err := json.Unmarshal([]byte(out), &pods); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatalf("no pods %s in %s", selector, ns)
	}
	return pods.Items
}

// checkPodIPs: a pod's podIPs are one per family of the stack, in its
// order, each in its pod subnet.
func checkPodIPs(t *testing.T, pod corev1.Pod, st ipStack) {
	t.Helper()
	if len(pod.Status.PodIPs) != len(st.families) {
		t.Errorf("pod %s/%s: podIPs %v, want one per family %v", pod.Namespace, pod.Name, pod.Status.PodIPs, st.families)
		return
	}
	for i, p := range pod.Status.PodIPs {
		a, err := netip.ParseAddr(p.IP)
		if err != nil || !st.podSubnets[i].Contains(a) {
			t.Errorf("pod %s/%s: podIPs[%d] %s, want an address of %s", pod.Namespace, pod.Name, i, p.IP, st.podSubnets[i])
		}
	}
}

// stackClusterIPs are the Service's clusterIPs, checked: one per family
// of the stack (its ipFamilies), in its order, each from its Service
// range.
func stackClusterIPs(t *testing.T, k func(string, ...string) (string, error), st ipStack) []netip.Addr {
	t.Helper()
	out, err := k("", "-n", dualStackNS, "get", "service", "web", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var svc corev1.Service
	if err := json.Unmarshal([]byte(out), &svc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(svc.Spec.IPFamilies, st.families) || len(svc.Spec.ClusterIPs) != len(st.families) {
		t.Fatalf("Service web: ipFamilies %v, clusterIPs %v; want %v, a clusterIP each", svc.Spec.IPFamilies, svc.Spec.ClusterIPs, st.families)
	}
	var ips []netip.Addr
	for i, s := range svc.Spec.ClusterIPs {
		a, err := netip.ParseAddr(s)
		if err != nil || !st.serviceRanges[i].Contains(a) {
			t.Fatalf("Service web: clusterIPs[%d] %s, want an address of %s", i, s, st.serviceRanges[i])
		}
		ips = append(ips, a)
	}
	t.Logf("Service web: clusterIPs %v", ips)
	return ips
}
