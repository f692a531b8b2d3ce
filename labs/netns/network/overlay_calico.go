package network

import (
	"fmt"

	"github.com/svclab/svclab/labs/netns/topology"
)

// calicoOverlay is Calico's VXLAN mode as Felix programs it: vxlan.calico,
// VNI 4096, UDP port 4789, the VTEP address taken from the node's block
// (here its first address, which is what Calico's IPAM hands out first),
// a blackhole route for the node's own block, and natOutgoing for the pool.
type calicoOverlay struct{}

const (
	CalicoVXLANDevice = "vxlan.calico"
	CalicoVNI         = 4096
	CalicoVXLANPort   = 4789
)

func (calicoOverlay) vtep(n topology.Node) VTEP {
	return VTEP{
		Device: CalicoVXLANDevice,
		VNI:    CalicoVNI,
		Port:   CalicoVXLANPort,
		Addr:   n.PodCIDR.Masked().Addr(),
		MAC:    vtepMAC(n.Name, CalicoVXLANDevice),
		Local:  n.IP.Addr(),
		MTU:    UnderlayMTU - vxlanOverhead,
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
			Rules:  CalicoNATOutgoingRules(lab.Spec.PodSubnet.String()),
		})
}

// CalicoNATOutgoingRules imitate Felix's natOutgoing for the IP pool:
// traffic from pods to anything outside the pool is masqueraded. Felix
// matches ipsets of all pools (cali40masq-ipam-pools, cali40all-ipam-pools);
// a lab has one pool, so plain CIDRs say the same.
func CalicoNATOutgoingRules(pool string) string {
	return fmt.Sprintf(`*nat
:cali-nat-outgoing - [0:0]
-A POSTROUTING -m comment --comment "svclab: calico natOutgoing" -j cali-nat-outgoing
-A cali-nat-outgoing -s %[1]s ! -d %[1]s -m comment --comment "svclab: calico natOutgoing" -j MASQUERADE --random-fully
COMMIT
`, pool)
}

var _ overlay = calicoOverlay{}
