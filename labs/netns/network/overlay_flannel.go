package network

import (
	"net/netip"

	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/podnet"
)

// flannelOverlay is flannel's vxlan backend: flannel.1, VNI 1, UDP port
// 8472 (the Linux default, not IANA's 4789), the VTEP address is the
// network address of the node's podCIDR, and flanneld runs with --ip-masq.
// With IPv6 (EnableIPv6), flannel adds flannel-v6.1: the same VNI and
// port, a MAC of its own, the node's IPv6 address as its local address,
// the network address of the node's IPv6 range as a /128, accept_ra off,
// and its own ip6tables masquerade rules (pkg/backend/vxlan: vxlan.go,
// device.go; pkg/trafficmngr/iptables: masqIP6Rules).
type flannelOverlay struct{}

func (flannelOverlay) vtep(node string, podCIDR netip.Prefix, local netip.Addr) VTEP {
	dev := podnet.FlannelDevice
	if podCIDR.Addr().Is6() {
		dev = podnet.FlannelDeviceIPv6
	}
	return VTEP{
		Device: dev,
		VNI:    podnet.FlannelVNI,
		Port:   podnet.FlannelPort,
		Addr:   podCIDR.Masked().Addr(),
		MAC:    vtepMAC(node, dev),
		Local:  local,
		MTU:    podnet.PodMTU,
	}
}

func (flannelOverlay) nodeSteps(lab *topology.Lab, self *Host, peers []*Host) []Step {
	var steps []Step
	for _, v := range self.Node.VTEPs {
		steps = append(steps, vxlanSteps(self, v, peers)...)
		if v.Addr.Is6() {
			steps = append(steps, SetSysctl{NS: self.Namespace, Key: "net/ipv6/conf/" + v.Device + "/accept_ra", Value: "0"})
		}
	}
	for i, cidr := range self.Node.PodCIDRs {
		cluster := topology.OfFamily(clusterSubnets(lab), topology.FamilyOf(cidr.Addr()))
		if cidr.Addr().Is4() {
			steps = append(steps, IptablesRestore{
				NS:     self.Namespace,
				Binary: lab.Spec.Proxy.IPTablesBackend.RestoreCommand(),
				Rules:  podnet.FlannelMasqRules(cluster.String(), self.Node.PodCIDRs[i].String()),
			})
			continue
		}
		steps = append(steps, IptablesRestore{
			NS:     self.Namespace,
			Binary: lab.Spec.Proxy.IPTablesBackend.RestoreCommandIPv6(),
			Rules:  podnet.FlannelMasqIP6Rules(cluster.String(), cidr.String()),
		})
	}
	return steps
}

// clusterSubnets are the lab's pod subnets, primary first (a hand-built
// lab may have only PodSubnet).
func clusterSubnets(lab *topology.Lab) []netip.Prefix {
	if len(lab.Spec.PodSubnets) == 0 {
		return []netip.Prefix{lab.Spec.PodSubnet}
	}
	return lab.Spec.PodSubnets
}

var _ overlay = flannelOverlay{}
