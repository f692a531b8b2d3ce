package netns

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/workload"
	"github.com/svclab/svclab/proxy/iptables"
)

func dnsTestLab() *Lab {
	t := &topology.Lab{}
	t.Metadata.Name = "dns"
	t.Spec.ServiceSubnet = netip.MustParsePrefix("10.96.0.0/16")
	t.Spec.PodSubnet = netip.MustParsePrefix("10.244.0.0/16")
	t.Spec.Nodes = []topology.Node{{Name: "node1", PodCIDR: netip.MustParsePrefix("10.244.1.0/24")}, {Name: "node2", PodCIDR: netip.MustParsePrefix("10.244.2.0/24")}}
	return &Lab{Topology: t}
}

// TestClusterDNSObjects: a new lab's kube-dns Service is kubeadm's (the
// tenth address, upstream's ports and selector), so its chains have
// upstream's names, and its one coredns pod is selected by it and runs
// svclab's DNS server.
func TestClusterDNSObjects(t *testing.T) {
	l := dnsTestLab()
	st, err := l.Cluster().Apply(&labstore.State{}, clusterDNSManifests(l.Topology), "dns")
	if err != nil {
		t.Fatal(err)
	}
	svc := st.Service("kube-system", "kube-dns")
	if svc == nil || svc.Spec.ClusterIP != "10.96.0.10" || svc.Spec.Selector["k8s-app"] != "kube-dns" {
		t.Fatalf("kube-dns: %+v", svc)
	}
	// Upstream's chain names for kube-system/kube-dns (kube-proxy's
	// iptables-save on any kubeadm cluster shows these).
	want := map[string]string{
		"dns/UDP":     "KUBE-SVC-TCOU7JCQXEZGVUNU",
		"dns-tcp/TCP": "KUBE-SVC-ERIFXISQEP7F7OF4",
		"metrics/TCP": "KUBE-SVC-JD5MR3NA4I4DYORP",
	}
	if len(svc.Spec.Ports) != len(want) {
		t.Fatalf("ports %+v, want dns, dns-tcp, metrics", svc.Spec.Ports)
	}
	for _, p := range svc.Spec.Ports {
		key := p.Name + "/" + string(p.Protocol)
		got := iptables.ServiceChainName("kube-system/kube-dns:"+p.Name, strings.ToLower(string(p.Protocol)))
		if got != want[key] {
			t.Errorf("%s: chain %s, want %s", key, got, want[key])
		}
	}
	if len(st.Pods) != 1 || !isCoreDNS(st.Pods[0]) || st.Pods[0].Spec.NodeName != "node1" {
		t.Fatalf("pods %+v, want one coredns pod on node1", st.Pods)
	}
	if n := len(st.EndpointSlices); n != 1 || len(st.EndpointSlices[0].Endpoints) != 1 {
		t.Errorf("kube-dns slices %+v, want the coredns pod as the one endpoint", st.EndpointSlices)
	}
	// The system pod does not count when the lab spreads its workloads:
	// the first pod of a Deployment still lands on node1.
	m, err := workload.Decode([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	next, err := l.Cluster().Apply(st, m, "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p := next.Pod("p"); p.Spec.NodeName != "node1" {
		t.Errorf("first workload pod on %s, want node1", p.Spec.NodeName)
	}
}

func TestIsCoreDNS(t *testing.T) {
	for image, want := range map[string]bool{
		"registry.k8s.io/coredns/coredns:v1.12.0": true,
		"coredns/coredns":                         true,
		"coredns/coredns@sha256:abc":              true,
		"localhost:5000/coredns":                  true,
		"svclab/netexec:dev":                      false,
		"coredns-like/netexec":                    false,
		"":                                        false,
	} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: image}}}}
		if got := isCoreDNS(pod); got != want {
			t.Errorf("image %q: coredns %v, want %v", image, got, want)
		}
	}
}

// TestResolvConfBody: a pod's resolv.conf is the kubelet's for
// dnsPolicy ClusterFirst.
func TestResolvConfBody(t *testing.T) {
	got := string(dnsTestLab().resolvConf("demo"))
	want := "search demo.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
	if got != want {
		t.Errorf("resolv.conf:\n%s\nwant:\n%s", got, want)
	}
}
