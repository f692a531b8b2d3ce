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

// dualTopology is a two-node dual-stack lab; the IPv6 addresses, ranges
// and subnets are the derived ones and kind's defaults.
const dualTopology = `
apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: NAME}
spec:
  cni: CNI
  ipFamily: dual
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

func testDualStackPods(t *testing.T, cni string) {
	name := roottest.UniqueName("dual")
	file := writeFile(t, "lab.yaml", strings.NewReplacer("NAME", name, "CNI", cni).Replace(dualTopology))
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
	pods, err := lab.PodObjects(nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	a, b := byName["a"], byName["b"]
	if a == nil || b == nil {
		t.Fatalf("pods a and b not found among %d pods", len(pods))
	}
	for _, p := range []*corev1.Pod{a, b} {
		if len(p.Status.PodIPs) != 2 || !netip.MustParseAddr(p.Status.PodIPs[0].IP).Is4() || !netip.MustParseAddr(p.Status.PodIPs[1].IP).Is6() {
			t.Fatalf("pod %s podIPs = %v, want an IPv4 and an IPv6 address", p.Name, p.Status.PodIPs)
		}
	}
	for _, ip := range b.Status.PodIPs {
		target := netip.AddrPortFrom(netip.MustParseAddr(ip.IP), 8080).String()
		res, err := lab.Traffic("a", traffic.Options{Target: target, Connections: 1}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() > 0 || res.Succeeded != 1 {
			t.Errorf("a → b at %s: %+v", target, res)
		}
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
