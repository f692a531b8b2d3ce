package podnet

import (
	"crypto/sha1" //nolint:gosec // Calico's name derivation, not a security use
	"encoding/hex"
	"net"
	"net/netip"
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

// CalicoGatewayIPv6 is the pods' IPv6 default gateway with the Calico
// attachment: the link-local address the kernel gives the node's end of
// the pod's veth from CalicoHostMAC (EUI-64), which Calico's CNI plugin
// routes the pod through (dataplane_linux.go: hostSideMACAsIPv6LL).
var CalicoGatewayIPv6 = netip.MustParseAddr("fe80::ecee:eeff:feee:eeee")

func hashHex(s string, n int) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}
