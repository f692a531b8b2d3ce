package kubeprint

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/workload"
)

// dualStackManifest is a NodePort Service that prefers dual-stack and
// two pods behind it, as a dual lab's API server stores them.
const dualStackManifest = `
apiVersion: v1
kind: Pod
metadata: {name: web-a, labels: {app: web}}
spec: {nodeName: hosta, containers: [{name: web, image: nginx, ports: [{name: http, containerPort: 8080, protocol: TCP}]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-b, labels: {app: web}}
spec: {nodeName: hostb, containers: [{name: web, image: nginx, ports: [{name: http, containerPort: 8080, protocol: TCP}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  ipFamilyPolicy: PreferDualStack
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
`

// dualStackState applies dualStackManifest on a dual lab, IPv4 primary.
func dualStackState(t *testing.T) *labstore.State {
	t.Helper()
	node := func(name string, n int) workload.Node {
		v4 := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(n), 0}), 24)
		v6 := netip.MustParsePrefix("fd00:10:244:" + string(rune('0'+n)) + "::/64")
		return workload.Node{Name: name, PodCIDR: v4, PodCIDRs: []netip.Prefix{v4, v6}}
	}
	c := workload.Cluster{
		Nodes:          []workload.Node{node("hosta", 1), node("hostb", 2)},
		ServiceSubnet:  netip.MustParsePrefix("10.96.0.0/16"),
		ServiceSubnets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00:10:96::/112")},
	}
	m, err := workload.Decode([]byte(dualStackManifest), "dual.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Apply(&labstore.State{}, m, "dual.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDescribeAndGetDualStack: describe and get -o yaml of a dual-stack
// Service (IP Family Policy, IP Families, both cluster IPs, endpoints of
// both slices) and of a pod with an address of each family, as kubectl
// shows them.
func TestDescribeAndGetDualStack(t *testing.T) {
	st := dualStackState(t)
	svc := st.Service("default", "web")
	var slices []discoveryv1.EndpointSlice
	for _, s := range st.EndpointSlices {
		if s.Labels[discoveryv1.LabelServiceName] == "web" {
			slices = append(slices, *s)
		}
	}
	if len(slices) != 2 {
		t.Fatalf("%d slices of Service web, want one per address type", len(slices))
	}
	pod := st.Pod("web-a")
	pod.Status.HostIP = "192.168.16.73"
	pod.Status.HostIPs = []corev1.HostIP{{IP: "192.168.16.73"}, {IP: "fd00::c0a8:1049"}}
	golden.Check(t, "describe-service-dualstack.golden", []byte(DescribeService(svc, slices)))
	golden.Check(t, "describe-pod-dualstack.golden", []byte(DescribePod(pod)))
	golden.Check(t, "service-dualstack.yaml.golden", render(t, []runtime.Object{svc}, Options{Output: OutputYAML, Single: true}))
	golden.Check(t, "pod-dualstack.yaml.golden", render(t, []runtime.Object{pod}, Options{Output: OutputYAML, Single: true}))
}
