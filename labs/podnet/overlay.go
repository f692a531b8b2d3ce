package podnet

// UnderlayMTU is the MTU of every node's eth0 (and of a netns lab's
// router bridges).
const UnderlayMTU = 1500

// VXLANOverhead is what VXLAN encapsulation over IPv4 costs: outer IP (20),
// UDP (8), VXLAN (8) and inner Ethernet (14) headers.
const VXLANOverhead = 50

// PodMTU is the MTU of pod interfaces and VXLAN devices: the underlay's
// minus VXLANOverhead, as flannel and Calico compute it.
const PodMTU = UnderlayMTU - VXLANOverhead

// flannel's vxlan backend: flannel.1, VNI 1, UDP port 8472 (the Linux
// default, not IANA's 4789).
const (
	FlannelDevice = "flannel.1"
	FlannelVNI    = 1
	FlannelPort   = 8472
)

// Calico's VXLAN mode as Felix programs it: vxlan.calico, VNI 4096, UDP
// port 4789.
const (
	CalicoVXLANDevice = "vxlan.calico"
	CalicoVNI         = 4096
	CalicoVXLANPort   = 4789
)

// VXLANOverheadIPv6 is what VXLAN encapsulation over IPv6 costs: outer
// IPv6 (40), UDP (8), VXLAN (8) and inner Ethernet (14) headers (Felix's
// VXLANMTUV6 is the underlay's MTU minus 70).
const VXLANOverheadIPv6 = 70

// CalicoVXLANMTUIPv6 is the MTU of vxlan-v6.calico: Felix's VXLANMTUV6,
// the underlay's minus VXLANOverheadIPv6. Felix gives pods the smallest
// MTU of the encapsulations it runs (determinePodMTU), so a Calico node
// with IPv6 gives its pods this one.
const CalicoVXLANMTUIPv6 = UnderlayMTU - VXLANOverheadIPv6

// flannel's vxlan backend for IPv6 (EnableIPv6): its own device,
// flannel-v6.<VNI>, with flannel.1's VNI and port, a MAC of its own and
// the node's IPv6 underlay address as its local address.
const FlannelDeviceIPv6 = "flannel-v6.1"

// Calico's VXLAN mode for IPv6 as Felix programs it: vxlan-v6.calico,
// with vxlan.calico's VNI and port.
const CalicoVXLANDeviceIPv6 = "vxlan-v6.calico"
