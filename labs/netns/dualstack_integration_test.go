package netns_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/netns"
)

// dualTopology is a two-node dual-stack (or, with FAMILY, IPv6) lab; the
// IPv6 addresses, ranges and subnets are the derived ones and kind's
// defaults.
const dualTopology = `
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: NAME}
spec:
  cni: CNI
  ipFamily: FAMILY
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  nodes:
  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}
  - {name: node2, ip: 192.168.16.74/20, podCIDR: 10.244.2.0/24}
  clients:
  - {name: client, ip: 192.168.55.230/24}
`

// TestIntegrationDualStackPods: in a dual-stack lab of each CNI, nodes
// carry both pod ranges and both InternalIPs, pods get an address of each
// family (status.podIPs) on their eth0, and a pod reaches a pod on the
// other node at each of its addresses.
func TestIntegrationDualStackPods(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	for _, cni := range []string{"flannel-vxlan", "calico-proxyarp", "canal"} {
		t.Run(cni, func(t *testing.T) { testDualStackPods(t, cni) })
	}
}

// TestIntegrationIPv6Pods: in an ipv6 lab, nodes and pods have IPv6
// addresses only, and a pod reaches the other node's pod.
func TestIntegrationIPv6Pods(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	name := roottest.UniqueName("ipv6")
	file := writeFile(t, "lab.yaml", strings.NewReplacer("NAME", name, "CNI", "canal", "FAMILY", "ipv6").Replace(dualTopology))
	opts := netns.Options{Binary: roottest.SharedBinary(t)}
	lab, _, err := netns.Create(context.Background(), file, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netns.Delete(name) })
	nodes, err := lab.NodeObjects()
	if err != nil {
		t.Fatal(err)
	}
	if got := nodes[1].Spec.PodCIDRs; len(got) != 1 || got[0] != "fd00:10:244:2::/64" || nodes[1].Spec.PodCIDR != got[0] {
		t.Errorf("node2 podCIDRs = %v", got)
	}
	if err := lab.Apply(context.Background(), writeFile(t, "pods.yaml", twoPinnedPods), opts); err != nil {
		t.Fatal(err)
	}
	a, b := podPair(t, lab)
	if len(a.Status.PodIPs) != 1 || !netip.MustParseAddr(a.Status.PodIP).Is6() {
		t.Fatalf("pod a podIPs = %v, want one IPv6 address", a.Status.PodIPs)
	}
	mustReach(t, lab, opts, "a", b.Status.PodIP)
}

func testDualStackPods(t *testing.T, cni string) {
	name := roottest.UniqueName("dual")
	file := writeFile(t, "lab.yaml", strings.NewReplacer("NAME", name, "CNI", cni, "FAMILY", "dual").Replace(dualTopology))
	opts := netns.Options{Binary: roottest.SharedBinary(t)}
	lab, _, err := netns.Create(context.Background(), file, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netns.Delete(name) })
	nodes, err := lab.NodeObjects()
	if err != nil {
		t.Fatal(err)
	}
	if got := nodes[1].Spec.PodCIDRs; len(got) != 2 || got[0] != "10.244.2.0/24" || got[1] != "fd00:10:244:2::/64" {
		t.Errorf("node2 podCIDRs = %v", got)
	}
	if got := nodes[1].Status.Addresses; len(got) != 3 || got[0].Address != "192.168.16.74" || got[1].Address != "fd00::c0a8:104a" {
		t.Errorf("node2 addresses = %v", got)
	}
	if err := lab.Apply(context.Background(), writeFile(t, "pods.yaml", twoPinnedPods), opts); err != nil {
		t.Fatal(err)
	}
	a, b := podPair(t, lab)
	for _, p := range []*corev1.Pod{a, b} {
		if len(p.Status.PodIPs) != 2 || !netip.MustParseAddr(p.Status.PodIPs[0].IP).Is4() || !netip.MustParseAddr(p.Status.PodIPs[1].IP).Is6() {
			t.Fatalf("pod %s podIPs = %v, want an IPv4 and an IPv6 address", p.Name, p.Status.PodIPs)
		}
	}
	for _, ip := range b.Status.PodIPs {
		mustReach(t, lab, opts, "a", ip.IP)
	}
}

// podPair is the lab's pods a and b.
func podPair(t *testing.T, lab *netns.Lab) (a, b *corev1.Pod) {
	t.Helper()
	pods, err := lab.PodObjects(nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	if byName["a"] == nil || byName["b"] == nil {
		t.Fatalf("pods a and b not found among %d pods", len(pods))
	}
	return byName["a"], byName["b"]
}

// mustReach makes one HTTP connection from host to ip:8080.
func mustReach(t *testing.T, lab *netns.Lab, opts netns.Options, host, ip string) {
	t.Helper()
	target := netip.AddrPortFrom(netip.MustParseAddr(ip), 8080).String()
	res, err := lab.Traffic(host, traffic.Options{Target: target, Connections: 1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() > 0 || res.Succeeded != 1 {
		t.Errorf("%s → %s: %+v", host, target, res)
	}
}

// twoPinnedPods are one pod on each node, each serving on 8080.
const twoPinnedPods = `
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  nodeName: node1
  containers: [{name: c, image: svclab/netexec:dev, ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  nodeName: node2
  containers: [{name: c, image: svclab/netexec:dev, ports: [{containerPort: 8080}]}]
`
