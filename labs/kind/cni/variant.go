package cni

import (
	"crypto/sha1"
	"fmt"
	"net"

	"github.com/svclab/svclab/labs/podnet"
)

// The variants.
const (
	FlannelVXLAN   = "flannel-vxlan"
	CalicoProxyARP = "calico-proxyarp"
)

// Variants lists them.
var Variants = []string{FlannelVXLAN, CalicoProxyARP}

// Overlay is a variant's VXLAN device.
type Overlay struct {
	Device string
	VNI    int
	Port   int
}

// OverlayOf returns the variant's overlay.
func OverlayOf(variant string) (Overlay, error) {
	switch variant {
	case FlannelVXLAN:
		return Overlay{Device: podnet.FlannelDevice, VNI: podnet.FlannelVNI, Port: podnet.FlannelPort}, nil
	case CalicoProxyARP:
		return Overlay{Device: podnet.CalicoVXLANDevice, VNI: podnet.CalicoVNI, Port: podnet.CalicoVXLANPort}, nil
	}
	return Overlay{}, fmt.Errorf("cni %q: want one of %v", variant, Variants)
}

// OverlayIPv6Of returns the variant's IPv6 VXLAN device: flanneld's
// flannel-v6.<VNI> (same VNI and port as flannel.<VNI>) for
// flannel-vxlan. calico-proxyarp is IPv4-only in kind clusters so far.
func OverlayIPv6Of(variant string) (Overlay, error) {
	if variant != FlannelVXLAN {
		return Overlay{}, fmt.Errorf("cni %q gives pods IPv4 addresses only in kind clusters; %s has IPv6", variant, FlannelVXLAN)
	}
	return Overlay{Device: podnet.FlannelDeviceIPv6, VNI: podnet.FlannelVNI, Port: podnet.FlannelPort}, nil
}

// Validate checks a variant name.
func Validate(variant string) error {
	_, err := OverlayOf(variant)
	return err
}

// PodMTU is the MTU of pod interfaces and VXLAN devices.
const PodMTU = podnet.PodMTU

// VTEPMAC is the VXLAN device's MAC on node: stable, locally administered,
// derived like labs/netns/network's.
func VTEPMAC(node, dev string) net.HardwareAddr {
	sum := sha1.Sum([]byte("vtep/" + dev + "/" + node))
	mac := net.HardwareAddr(sum[:6])
	mac[0] = mac[0]&^0x01 | 0x02
	return mac
}
