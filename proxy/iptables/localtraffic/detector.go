// Package localtraffic tells a node's pod traffic apart from other traffic
// in iptables rules, for both iptables-based modes: proxy/iptables and
// proxy/ipvs. It is a leaf; the nftables mode has its own
// (nftables.LocalDetector). Upstream: pkg/proxy/util/localdetector.go.
package localtraffic

import (
	"fmt"
	"net/netip"
)

// Detector holds the iptables matches that tell traffic from this node's
// pods apart from other traffic. Upstream: proxyutil.LocalTrafficDetector
// (pkg/proxy/util/localdetector.go).
type Detector struct {
	// IfLocal matches traffic from a local pod, e.g. ["-s", "10.244.0.0/16"].
	IfLocal []string
	// IfNotLocal matches everything else, e.g. ["!", "-s", "10.244.0.0/16"].
	IfNotLocal []string
}

// Implemented reports whether the detector matches anything; a zero
// Detector is upstream's no-op detector.
func (d *Detector) Implemented() bool { return d != nil && len(d.IfLocal) > 0 }

// ByCIDR treats traffic from cidr, of either family, as pod traffic: the
// matches carry cidr as written, as upstream's ("fd00:10:244::/56").
func ByCIDR(cidr string) (*Detector, error) {
	if _, err := netip.ParsePrefix(cidr); err != nil {
		return nil, fmt.Errorf("cluster CIDR %q: %w", cidr, err)
	}
	return &Detector{IfLocal: []string{"-s", cidr}, IfNotLocal: []string{"!", "-s", cidr}}, nil
}

// ByBridgeInterface treats traffic arriving on the bridge iface
// as pod traffic.
func ByBridgeInterface(iface string) *Detector {
	return &Detector{IfLocal: []string{"-i", iface}, IfNotLocal: []string{"!", "-i", iface}}
}

// ByInterfaceNamePrefix treats traffic arriving on interfaces
// whose names start with prefix (such as "veth") as pod traffic.
func ByInterfaceNamePrefix(prefix string) *Detector {
	return &Detector{IfLocal: []string{"-i", prefix + "+"}, IfNotLocal: []string{"!", "-i", prefix + "+"}}
}
