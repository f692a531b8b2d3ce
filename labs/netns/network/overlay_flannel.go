package network

import (
	"fmt"

	"github.com/svclab/svclab/labs/netns/topology"
)

// flannelOverlay is flannel's vxlan backend: flannel.1, VNI 1, UDP port
// 8472 (the Linux default, not IANA's 4789), the VTEP address is the
// network address of the node's podCIDR, and flanneld runs with --ip-masq.
type flannelOverlay struct{}

const (
	FlannelDevice = "flannel.1"
	FlannelVNI    = 1
	FlannelPort   = 8472
)

func (flannelOverlay) vtep(n topology.Node) VTEP {
	return VTEP{
		Device: FlannelDevice,
		VNI:    FlannelVNI,
		Port:   FlannelPort,
		Addr:   n.PodCIDR.Masked().Addr(),
		MAC:    vtepMAC(n.Name, FlannelDevice),
		Local:  n.IP.Addr(),
		MTU:    UnderlayMTU - vxlanOverhead,
	}
}

func (flannelOverlay) nodeSteps(lab *topology.Lab, self *Host, peers []*Host) []Step {
	steps := vxlanSteps(self, peers)
	return append(steps, IptablesRestore{
		NS:     self.Namespace,
		Binary: lab.Spec.Proxy.IPTablesBackend.RestoreCommand(),
		Rules:  FlannelMasqRules(lab.Spec.PodSubnet.String(), self.Node.PodCIDR.String()),
	})
}

// FlannelMasqRules are the rules flanneld installs with --ip-masq (its
// FLANNEL-POSTRTG chain, from pkg/trafficmngr/iptables masqRules, on an
// iptables that has --random-fully) and its FORWARD rules (FLANNEL-FWD).
// 0x4000/0x4000 is kube-proxy's masquerade mark: traffic kube-proxy will
// masquerade itself is left alone.
func FlannelMasqRules(cluster, podCIDR string) string {
	const masq = `-m comment --comment "flanneld masq"`
	const fwd = `-m comment --comment "flanneld forward"`
	return fmt.Sprintf(`*nat
:FLANNEL-POSTRTG - [0:0]
-A POSTROUTING %[3]s -j FLANNEL-POSTRTG
-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 %[3]s -j RETURN
-A FLANNEL-POSTRTG -s %[2]s -d %[1]s %[3]s -j RETURN
-A FLANNEL-POSTRTG -s %[1]s -d %[2]s %[3]s -j RETURN
-A FLANNEL-POSTRTG ! -s %[1]s -d %[2]s %[3]s -j RETURN
-A FLANNEL-POSTRTG -s %[1]s ! -d 224.0.0.0/4 %[3]s -j MASQUERADE --random-fully
-A FLANNEL-POSTRTG ! -s %[1]s -d %[1]s %[3]s -j MASQUERADE --random-fully
COMMIT
*filter
:FLANNEL-FWD - [0:0]
-A FORWARD %[4]s -j FLANNEL-FWD
-A FLANNEL-FWD -s %[1]s %[4]s -j ACCEPT
-A FLANNEL-FWD -d %[1]s %[4]s -j ACCEPT
COMMIT
`, cluster, podCIDR, masq, fwd)
}

var _ overlay = flannelOverlay{}
