package podnet

import (
	"crypto/sha1" //nolint:gosec // Calico's name derivation, not a security use
	"encoding/hex"
	"net"
)

// CalicoVethName is the node-side end of a pod's veth with the Calico
// attachment, derived as Calico does: "cali" and the first 11 hex characters
// of sha1("<namespace>.<pod>").
func CalicoVethName(podNamespace, pod string) string {
	return "cali" + hashHex(podNamespace+"."+pod, 11)
}

// CalicoHostMAC is the MAC of every cali* interface on the node side;
// proxy ARP answers 169.254.1.1 with it.
var CalicoHostMAC = net.HardwareAddr{0xee, 0xee, 0xee, 0xee, 0xee, 0xee}

func hashHex(s string, n int) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}
