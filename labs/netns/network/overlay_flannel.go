package network

import (
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/podnet"
)

// flannelOverlay is flannel's vxlan backend: flannel.1, VNI 1, UDP port
// 8472 (the Linux default, not IANA's 4789), the VTEP address is the
// network address of the node's podCIDR, and flanneld runs with --ip-masq.
type flannelOverlay struct{}

func (flannelOverlay) vtep(n topology.Node) VTEP {
	return VTEP{
		Device: podnet.FlannelDevice,
		VNI:    podnet.FlannelVNI,
		Port:   podnet.FlannelPort,
		Addr:   n.PodCIDR.Masked().Addr(),
		MAC:    vtepMAC(n.Name, podnet.FlannelDevice),
		Local:  n.IP.Addr(),
		MTU:    podnet.PodMTU,
	}
}

func (flannelOverlay) nodeSteps(lab *topology.Lab, self *Host, peers []*Host) []Step {
	steps := vxlanSteps(self, peers)
	return append(steps, IptablesRestore{
		NS:     self.Namespace,
		Binary: lab.Spec.Proxy.IPTablesBackend.RestoreCommand(),
		Rules:  podnet.FlannelMasqRules(lab.Spec.PodSubnet.String(), self.Node.PodCIDR.String()),
	})
}

var _ overlay = flannelOverlay{}
