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

// The dual-stack cluster's config and kind's dual-stack subnets it
// writes out (pods: a /64 of the IPv6 /56 per node).
var (
	dualStackConfig   = filepath.Join("..", "..", "clusters", "kind", "flannel-dual.yaml")
	dualPodSubnets    = []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fd00:10:244::/56")}
	dualServiceRanges = []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00:10:96::/112")}
)

// dualStackNS is the namespace of the test's workload.
const dualStackNS = "dualstack"

// dualStackManifest: two netexec pods, one per node, behind a Service
// that requires both families (IPv4 first, the cluster's primary), and a
// client pod with svclab's traffic client (the netexec image).
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
  ipFamilyPolicy: RequireDualStack
  ipFamilies: [IPv4, IPv6]
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

// dualStackRuns are the pod networks the dual-stack test creates a
// cluster of, one after the other: the real flannel and svclab's
// flannel-vxlan (both flannel.1 and flannel-v6.1).
var dualStackRuns = []string{kind.CNIFlannel, cni.FlannelVXLAN}

// TestIntegrationKindDualStack creates a dual-stack kind cluster
// (clusters/kind/flannel-dual.yaml) per pod network of dualStackRuns,
// with kind's kube-proxy in iptables mode, checks it (e2eDualStack) and
// deletes it. With SVCLAB_KIND_CLUSTER it checks that cluster instead
// (made from the same config) and creates none. Not in `make e2e-kind`
// yet; ~2.5 min a cluster on a warm cache (create ~1.5 min, checks
// ~25 s, delete ~30 s).
func TestIntegrationKindDualStack(t *testing.T) {
	if os.Getenv("SVCLAB_E2E_KIND") != "1" {
		t.Skip("set SVCLAB_E2E_KIND=1 to run the dual-stack kind end-to-end test (minutes)")
	}
	roottest.Require(t, "runs dockerd and a kind cluster")
	if name := os.Getenv("SVCLAB_KIND_CLUSTER"); name != "" {
		e2eDualStack(t, clusterOf(t, name))
		return
	}
	bin := dualStackSvclabBinary(t)
	ipv6Before := hostIPv6State(t)
	for _, cniName := range dualStackRuns {
		t.Run(cniName, func(t *testing.T) {
			name := "e2e-dual-" + cniName
			start := time.Now()
			out := run(t, bin, "create", "cluster", "--config", dualStackConfig, "--name", name, "--cni", cniName)
			t.Logf("MEASURE dual-stack cluster (%s): create %s\n%s", cniName, time.Since(start).Round(time.Second), lastLines(out, 12))
			defer func() {
				t0 := time.Now()
				run(t, bin, "delete", "cluster", "--name", name)
				t.Logf("MEASURE dual-stack cluster (%s): delete %s; all %s", cniName, time.Since(t0).Round(time.Second), time.Since(start).Round(time.Second))
			}()
			t0 := time.Now()
			e2eDualStack(t, clusterOf(t, name))
			t.Logf("MEASURE dual-stack cluster (%s): checks %s", cniName, time.Since(t0).Round(time.Second))
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

// e2eDualStack: every node has an InternalIP and a podCIDR of each
// family and flannel's two VXLAN devices; CoreDNS has both families'
// addresses; a Service requiring both families gets a clusterIP from each
// Service range, kube-proxy writes it into ip6tables too, and a pod
// reaches it over IPv6 and over IPv4 (TCP, both backends answering).
func e2eDualStack(t *testing.T, c kind.Cluster) {
	k := kubectlIn(c)
	t.Run("nodes have both families' InternalIPs and podCIDRs", func(t *testing.T) { checkDualStackNodes(t, c, k) })
	t.Run("flannel runs both families on every node", func(t *testing.T) { checkFlannelIPv6OnNodes(t, c, c.CNI == kind.CNIFlannel) })
	t.Run("CoreDNS has both families' addresses", func(t *testing.T) {
		for _, pod := range dualStackPods(t, k, "kube-system", "k8s-app=kube-dns") {
			checkPodIPs(t, pod)
		}
	})

	if out, err := k(dualStackManifest, "apply", "-f", "-"); err != nil {
		t.Fatalf("applying the dual-stack workload: %v\n%s", err, out)
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
		checkPodIPs(t, pod)
		web = append(web, pod.Name)
		webNodes = append(webNodes, pod.Spec.NodeName)
	}
	slices.Sort(web)
	slices.Sort(webNodes)
	if !slices.Equal(webNodes, c.Nodes) {
		t.Fatalf("web pods on nodes %v, want one on each of %v (so that traffic crosses the overlay)", webNodes, c.Nodes)
	}

	clusterIPs := dualStackClusterIPs(t, k)
	t.Run("kube-proxy writes the IPv6 clusterIP into ip6tables", func(t *testing.T) {
		for _, node := range c.Nodes {
			rules := dockerExec(t, c, node, "ip6tables-save", "-t", "nat")
			if !hasRule(rules, dualStackNS+"/web", "-d "+clusterIPs[1].String()+"/128") {
				t.Errorf("%s's ip6tables nat table has no rule for %s/web to %s", node, dualStackNS, clusterIPs[1])
			}
		}
	})
	for _, ip := range []netip.Addr{clusterIPs[1], clusterIPs[0]} {
		family := "IPv4"
		if ip.Is6() {
			family = "IPv6"
		}
		t.Run("a pod reaches the Service over "+family, func(t *testing.T) {
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

// checkDualStackNodes: each node's InternalIPs and podCIDRs are one of
// each family, IPv4 first, the podCIDRs a /24 and a /64 of the pod
// subnets.
func checkDualStackNodes(t *testing.T, c kind.Cluster, k func(string, ...string) (string, error)) {
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
		var internal []netip.Addr
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				internal = append(internal, netip.MustParseAddr(a.Address))
			}
		}
		if len(internal) != 2 || !internal[0].Is4() || !internal[1].Is6() {
			t.Errorf("node %s: InternalIPs %v, want an IPv4 and an IPv6 address", n.Name, internal)
		}
		if len(n.Spec.PodCIDRs) != 2 {
			t.Errorf("node %s: podCIDRs %v, want one per family", n.Name, n.Spec.PodCIDRs)
			continue
		}
		for i, bits := range []int{24, 64} {
			p, err := netip.ParsePrefix(n.Spec.PodCIDRs[i])
			if err != nil || p.Bits() != bits || !dualPodSubnets[i].Overlaps(p) || p.Bits() < dualPodSubnets[i].Bits() {
				t.Errorf("node %s: podCIDRs[%d] %s, want a /%d of %s", n.Name, i, n.Spec.PodCIDRs[i], bits, dualPodSubnets[i])
			}
		}
		t.Logf("node %s: InternalIPs %v, podCIDRs %v", n.Name, internal, n.Spec.PodCIDRs)
	}
}

// checkFlannelIPv6OnNodes: on every node flanneld (or svclab's
// flannel-vxlan agent, with flanneld's names) made its IPv6 VXLAN device
// (flannel-v6.<VNI>, the VNI and port of flannel.<VNI>) beside the IPv4
// one, and the real flanneld wrote both families into
// /run/flannel/subnet.env.
func checkFlannelIPv6OnNodes(t *testing.T, c kind.Cluster, real bool) {
	info, err := kind.Flannel()
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range c.Nodes {
		for _, dev := range []string{info.Device, info.DeviceIPv6} {
			link := dockerExec(t, c, node, "ip", "-d", "link", "show", dev)
			if !strings.Contains(link, fmt.Sprintf("vxlan id %d ", info.VNI)) || !strings.Contains(link, fmt.Sprintf("dstport %d ", info.Port)) {
				t.Errorf("%s on %s is not VXLAN VNI %d port %d:\n%s", dev, node, info.VNI, info.Port, link)
			}
		}
		if !real {
			continue
		}
		env := dockerExec(t, c, node, "cat", "/run/flannel/subnet.env")
		for _, want := range []string{"FLANNEL_NETWORK=" + dualPodSubnets[0].String() + "\n", "FLANNEL_IPV6_NETWORK=" + dualPodSubnets[1].String() + "\n", "FLANNEL_IPV6_SUBNET=fd00:10:244:"} {
			if !strings.Contains(env, want) {
				t.Errorf("/run/flannel/subnet.env on %s has no %q:\n%s", node, strings.TrimSpace(want), env)
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

// checkPodIPs: a pod's podIPs are one of each family, IPv4 first, each
// in its pod subnet.
func checkPodIPs(t *testing.T, pod corev1.Pod) {
	t.Helper()
	if len(pod.Status.PodIPs) != 2 {
		t.Errorf("pod %s/%s: podIPs %v, want one per family", pod.Namespace, pod.Name, pod.Status.PodIPs)
		return
	}
	for i, p := range pod.Status.PodIPs {
		a, err := netip.ParseAddr(p.IP)
		if err != nil || !dualPodSubnets[i].Contains(a) {
			t.Errorf("pod %s/%s: podIPs[%d] %s, want an address of %s", pod.Namespace, pod.Name, i, p.IP, dualPodSubnets[i])
		}
	}
}

// dualStackClusterIPs are the Service's two clusterIPs, checked: IPv4
// then IPv6 (its ipFamilies), each from its Service range.
func dualStackClusterIPs(t *testing.T, k func(string, ...string) (string, error)) []netip.Addr {
	t.Helper()
	out, err := k("", "-n", dualStackNS, "get", "service", "web", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var svc corev1.Service
	if err := json.Unmarshal([]byte(out), &svc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(svc.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}) || len(svc.Spec.ClusterIPs) != 2 {
		t.Fatalf("Service web: ipFamilies %v, clusterIPs %v; want IPv4 and IPv6, two clusterIPs", svc.Spec.IPFamilies, svc.Spec.ClusterIPs)
	}
	var ips []netip.Addr
	for i, s := range svc.Spec.ClusterIPs {
		a, err := netip.ParseAddr(s)
		if err != nil || !dualServiceRanges[i].Contains(a) {
			t.Fatalf("Service web: clusterIPs[%d] %s, want an address of %s", i, s, dualServiceRanges[i])
		}
		ips = append(ips, a)
	}
	t.Logf("Service web: clusterIPs %v", ips)
	return ips
}
