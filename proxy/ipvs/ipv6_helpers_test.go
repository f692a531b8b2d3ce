package ipvs

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/iptables/localtraffic"
	"github.com/svclab/svclab/proxy/model"
)

// The IPv6 node of the tests: two global addresses (and, in the fake
// kernel, a link-local one, which no proxier uses) and kind's IPv6 pod
// range.
var (
	nodeIP6     = netip.MustParseAddr("fc00:f853:ccd:e793::10")
	nodeIP6b    = netip.MustParseAddr("2001:db8:0:2::15")
	linkLocal6  = netip.MustParseAddr("fe80::a8c1:abff:fe12:3456")
	clusterPod6 = "fd00:10:244::/56"
)

// snapshot6 is snapshot for the IPv6 proxier.
func snapshot6(sps ...*model.ServicePort) *model.Snapshot {
	s := &model.Snapshot{NodeName: testNode, Family: corev1.IPv6Protocol, ServicePorts: sps}
	s.SortServicePorts()
	return s
}

// baseSettings6 is baseSettings for the IPv6 proxier of the same node.
func baseSettings6() Settings {
	d, err := localtraffic.ByCIDR(clusterPod6)
	if err != nil {
		panic(err)
	}
	return Settings{
		Family:        corev1.IPv6Protocol,
		NodeAddresses: []netip.Addr{nodeIP6b, nodeIP6},
		NodeIP:        nodeIP6,
		LocalDetector: d,
		MasqueradeBit: 14,
		RandomFully:   true,
	}
}

// kubeDNS6 is kube-dns on kind's IPv6 service range.
func kubeDNS6() []*model.ServicePort {
	return []*model.ServicePort{
		sp("kube-system", "kube-dns", "dns", corev1.ProtocolUDP, "fd00:10:96::a", 53, eps("local:[fd00:10:244::5]:53", "[fd00:10:244:1::7]:53")),
		sp("kube-system", "kube-dns", "dns-tcp", corev1.ProtocolTCP, "fd00:10:96::a", 53, eps("local:[fd00:10:244::5]:53", "[fd00:10:244:1::7]:53")),
	}
}

// nodeAddressesOfBothFamilies are the fake kernel's eth0 addresses of a
// dual-stack node.
func nodeAddressesOfBothFamilies() []string {
	return []string{nodeIP.String(), nodeIP2.String(), nodeIP6.String(), nodeIP6b.String(), linkLocal6.String()}
}
