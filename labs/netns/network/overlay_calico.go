package network

import (
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/podnet"
)

// calicoOverlay is Calico's VXLAN mode as Felix programs it: vxlan.calico,
// VNI 4096, UDP port 4789, the VTEP address taken from the node's block
// (here its first address, which is what Calico's IPAM hands out first),
// a blackhole route for the node's own block, and natOutgoing for the pool.
type calicoOverlay struct{}

func (calicoOverlay) vtep(n topology.Node) VTEP {
	return VTEP{
		Device: podnet.CalicoVXLANDevice,
		VNI:    podnet.CalicoVNI,
		Port:   podnet.CalicoVXLANPort,
		Addr:   n.PodCIDR.Masked().Addr(),
		MAC:    vtepMAC(n.Name, podnet.CalicoVXLANDevice),
		Local:  n.IP.Addr(),
		MTU:    podnet.PodMTU,
	}
}

// nodeSteps: the VXLAN pattern, then
//
//	ip -n <node> route add blackhole 10.100.40.0/24
//	ip netns exec <node> iptables-restore -w 5 --noflush   (natOutgoing)
func (calicoOverlay) nodeSteps(lab *topology.Lab, self *Host, peers []*Host) []Step {
	steps := vxlanSteps(self, peers)
	return append(steps,
		AddRoute{NS: self.Namespace, Dst: self.Node.PodCIDR, Blackhole: true},
		IptablesRestore{
			NS:     self.Namespace,
			Binary: lab.Spec.Proxy.IPTablesBackend.RestoreCommand(),
			Rules:  podnet.CalicoNATOutgoingRules(lab.Spec.PodSubnet.String()),
		})
}

var _ overlay = calicoOverlay{}
