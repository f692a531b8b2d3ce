package cni

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/labs/podnet"
)

// TestConflistDualStack: one host-local range per podCIDR, IPv4 first,
// so each pod gets an address of each family; one podCIDR stays the
// single-range file it always was.
func TestConflistDualStack(t *testing.T) {
	b, err := Conflist(FlannelVXLAN, netip.MustParsePrefix("10.244.1.0/24"), netip.MustParsePrefix("fd00:10:244:1::/64"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []struct {
			IPAM struct {
				Ranges [][]map[string]string `json:"ranges"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	r := conf.Plugins[0].IPAM.Ranges
	if len(r) != 2 || r[0][0]["subnet"] != "10.244.1.0/24" || r[1][0]["subnet"] != "fd00:10:244:1::/64" {
		t.Errorf("ranges %v, want 10.244.1.0/24 then fd00:10:244:1::/64", r)
	}
	single, _ := Conflist(FlannelVXLAN, netip.MustParsePrefix("10.244.1.0/24"))
	if err := json.Unmarshal(single, &conf); err != nil || len(conf.Plugins[0].IPAM.Ranges) != 1 {
		t.Errorf("single-stack conflist: %v\n%s", err, single)
	}
	if _, err := Conflist(FlannelVXLAN); err == nil {
		t.Error("no podCIDR: want an error")
	}
}

// TestFamilyNetsOf: --cluster-cidr is one CIDR or one per family; an
// IPv6 one runs flannel-v6.1 (flannel.1's VNI and port); calico-proxyarp
// has no IPv6.
func TestFamilyNetsOf(t *testing.T) {
	nets, err := familyNetsOf(FlannelVXLAN, "10.244.0.0/16,fd00:10:244::/56")
	if err != nil {
		t.Fatal(err)
	}
	if len(nets) != 2 || nets[0].is6() || nets[0].overlay.Device != podnet.FlannelDevice ||
		!nets[1].is6() || nets[1].overlay != (Overlay{Device: podnet.FlannelDeviceIPv6, VNI: podnet.FlannelVNI, Port: podnet.FlannelPort}) {
		t.Errorf("dual: %+v", nets)
	}
	if nets, err := familyNetsOf(FlannelVXLAN, "10.244.0.0/16"); err != nil || len(nets) != 1 || nets[0].overlay.Device != podnet.FlannelDevice {
		t.Errorf("ipv4: %+v, %v", nets, err)
	}
	for _, bad := range []struct{ variant, cidrs, want string }{
		{FlannelVXLAN, "10.244.0.0/16,10.245.0.0/16", "one CIDR per IP family"},
		{FlannelVXLAN, "10.244.0.0/33", "--cluster-cidr"},
		{CalicoProxyARP, "10.244.0.0/16,fd00:10:244::/56", "IPv4 addresses only"},
		{"weave", "10.244.0.0/16", "weave"},
	} {
		if _, err := familyNetsOf(bad.variant, bad.cidrs); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s %s: got %v, want an error containing %q", bad.variant, bad.cidrs, err, bad.want)
		}
	}
}

// TestNodesToPeersPerFamily: a dual-stack node is a peer of each family
// with that family's podCIDR and InternalIP; a node without IPv6 is no
// IPv6 peer, and when it is this node, the agent says so.
func TestNodesToPeersPerFamily(t *testing.T) {
	node := func(name string, cidrs []string, ips ...string) corev1.Node {
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDRs: cidrs}}
		if len(cidrs) > 0 {
			n.Spec.PodCIDR = cidrs[0]
		}
		for _, ip := range ips {
			n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
		}
		return n
	}
	nodes := []corev1.Node{
		node("cp", []string{"10.244.0.0/24", "fd00:10:244::/64"}, "172.18.0.2", "fc00:f853:ccd:e793::2"),
		node("w1", []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, "172.18.0.3", "fc00:f853:ccd:e793::3"),
		node("w2", []string{"10.244.2.0/24"}, "172.18.0.4"),
	}
	self, peers, err := nodesToPeers(nodes, "w1", true)
	if err != nil {
		t.Fatal(err)
	}
	if self.PodCIDR.String() != "fd00:10:244:1::/64" || self.IP.String() != "fc00:f853:ccd:e793::3" ||
		len(peers) != 1 || peers[0].Name != "cp" || peers[0].PodCIDR.String() != "fd00:10:244::/64" || peers[0].IP.String() != "fc00:f853:ccd:e793::2" {
		t.Errorf("IPv6: self %+v, peers %+v", self, peers)
	}
	self, peers, err = nodesToPeers(nodes, "w1", false)
	if err != nil || self.PodCIDR.String() != "10.244.1.0/24" || self.IP.String() != "172.18.0.3" || len(peers) != 2 {
		t.Errorf("IPv4: self %+v, peers %+v, %v", self, peers, err)
	}
	if _, _, err := nodesToPeers(nodes, "w2", true); err == nil || !strings.Contains(err.Error(), "no IPv6 podCIDR") {
		t.Errorf("w2 has no IPv6: got %v", err)
	}
	if _, _, err := nodesToPeers([]corev1.Node{node("w3", nil)}, "w3", false); err == nil || err.Error() != "node w3 has no podCIDR or InternalIP yet" {
		t.Errorf("w3 has no podCIDR: got %v", err)
	}
}
