package kube

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// kubernetesService is the default namespace's kubernetes Service with
// the given cluster IPs, as the API server makes it.
func kubernetesService(ips ...string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
		Spec: corev1.ServiceSpec{ClusterIP: ips[0], ClusterIPs: ips}}
}

// nodeWith is a node with the given InternalIPs (and a Hostname, which
// is no InternalIP).
func nodeWith(name string, ips ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: name})
	for _, ip := range ips {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	return n
}

func TestClusterFamilies(t *testing.T) {
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	for _, c := range []struct {
		name    string
		objects []runtime.Object
		want    []corev1.IPFamily
	}{
		{"IPv4 cluster", []runtime.Object{kubernetesService("10.96.0.1"),
			nodeWith("a", "172.18.0.2"), nodeWith("b", "172.18.0.3")}, []corev1.IPFamily{v4}},
		{"IPv6 cluster (kind ipFamily: ipv6)", []runtime.Object{kubernetesService("fd00:10:96::1"),
			nodeWith("a", "fc00:f853:ccd:e793::2"), nodeWith("b", "fc00:f853:ccd:e793::3")}, []corev1.IPFamily{v6}},
		{"dual-stack, IPv4 primary: the kubernetes Service is single-stack, the nodes have both", []runtime.Object{kubernetesService("10.96.0.1"),
			nodeWith("a", "172.18.0.2", "fc00:f853:ccd:e793::2"), nodeWith("b", "172.18.0.3", "fc00:f853:ccd:e793::3")}, []corev1.IPFamily{v4, v6}},
		{"dual-stack, IPv6 primary", []runtime.Object{kubernetesService("fd00:10:96::1"),
			nodeWith("a", "fc00:f853:ccd:e793::2", "172.18.0.2")}, []corev1.IPFamily{v6, v4}},
		{"a PreferDualStack kubernetes Service says both", []runtime.Object{kubernetesService("10.96.0.1", "fd00:10:96::1"),
			nodeWith("a", "172.18.0.2")}, []corev1.IPFamily{v4, v6}},
		{"IPv6 on one node only is not the cluster's", []runtime.Object{kubernetesService("10.96.0.1"),
			nodeWith("a", "172.18.0.2", "fc00::2"), nodeWith("b", "172.18.0.3")}, []corev1.IPFamily{v4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ClusterFamilies(t.Context(), fake.NewClientset(c.objects...))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestClusterFamiliesWithoutTheKubernetesService(t *testing.T) {
	_, err := ClusterFamilies(t.Context(), fake.NewClientset(nodeWith("a", "172.18.0.2")))
	if err == nil {
		t.Fatal("no error without the kubernetes Service")
	}
}
