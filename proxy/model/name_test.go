package model

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestServicePortNameString(t *testing.T) {
	cases := []struct {
		name ServicePortName
		want string
	}{
		{ServicePortName{Namespace: "default", Name: "kubernetes", Port: "https", Protocol: corev1.ProtocolTCP}, "default/kubernetes:https"},
		{ServicePortName{Namespace: "kube-system", Name: "kube-dns", Port: "dns", Protocol: corev1.ProtocolUDP}, "kube-system/kube-dns:dns"},
		// Current upstream drops the colon for an unnamed port; kube-proxy
		// before the EndpointSlice rewrite wrote "default/nginx:".
		{ServicePortName{Namespace: "default", Name: "nginx", Protocol: corev1.ProtocolTCP}, "default/nginx"},
	}
	for _, c := range cases {
		if got := c.name.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestServicePortNameCompareOrdersByNamespaceNamePortProtocol(t *testing.T) {
	ordered := []ServicePortName{
		{Namespace: "a", Name: "z", Port: "p", Protocol: corev1.ProtocolTCP},
		{Namespace: "b", Name: "a", Port: "", Protocol: corev1.ProtocolTCP},
		{Namespace: "b", Name: "a", Port: "dns", Protocol: corev1.ProtocolTCP},
		{Namespace: "b", Name: "a", Port: "dns", Protocol: corev1.ProtocolUDP},
		{Namespace: "b", Name: "b", Port: "", Protocol: corev1.ProtocolTCP},
	}
	for i := range ordered {
		for j := range ordered {
			got := ordered[i].Compare(ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}
