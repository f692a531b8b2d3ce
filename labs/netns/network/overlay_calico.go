package network

import (
	"net/netip"

	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/podnet"
)

// calicoOverlay is Calico's VXLAN mode as Felix programs it: vxlan.calico,
// VNI 4096, UDP port 4789, the VTEP address taken from the node's block
// (here its first address, which is what Calico's IPAM hands out first),
// a blackhole route for the node's own block, and natOutgoing for the pool.
// With IPv6, Felix adds vxlan-v6.calico (the same VNI and port, its own
// MAC, the node's IPv6 address as its local address, an address of the
// node's IPv6 block, Felix's VXLANMTUV6), with the same routes, blackhole
// and natOutgoing.
type calicoOverlay struct{}

func (calicoOverlay) vtep(node string, podCIDR netip.Prefix, local netip.Addr) VTEP {
	dev, mtu := podnet.CalicoVXLANDevice, podnet.PodMTU
	if podCIDR.Addr().Is6() {
		dev, mtu = podnet.CalicoVXLANDeviceIPv6, podnet.CalicoVXLANMTUIPv6
	}
	return VTEP{
		Device: dev,
		VNI:    podnet.CalicoVNI,
		Port:   podnet.CalicoVXLANPort,
		Addr:   podCIDR.Masked().Addr(),
		MAC:    vtepMAC(node, dev),
		Local:  local,
		MTU:    mtu,
	}
}

// nodeSteps: the VXLAN pattern of each family, then for each
//
//	ip -n <node> route add blackhole 10.100.40.0/24
//	ip netns exec <node> iptables-restore -w 5 --noflush   (natOutgoing)
func (calicoOverlay) nodeSteps(lab *topology.Lab, self *Host, peers []*Host) []Step {
	var steps []Step
	for _, v := range self.Node.VTEPs {
		steps = append(steps, vxlanSteps(self, v, peers)...)
	}
	for _, cidr := range self.Node.PodCIDRs {
		pool := topology.OfFamily(clusterSubnets(lab), topology.FamilyOf(cidr.Addr()))
		binary := lab.Spec.Proxy.IPTablesBackend.RestoreCommand()
		if cidr.Addr().Is6() {
			binary = lab.Spec.Proxy.IPTablesBackend.RestoreCommandIPv6()
		}
		steps = append(steps,
			AddRoute{NS: self.Namespace, Dst: cidr, Blackhole: true},
			IptablesRestore{NS: self.Namespace, Binary: binary, Rules: podnet.CalicoNATOutgoingRules(pool.String())})
	}
	return steps
}

var _ overlay = calicoOverlay{}
