package ipvs

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/iptables/localtraffic"
)

// Settings are the node facts and configuration Compute needs besides the
// snapshot.
type Settings struct {
	// Family is the IP family of the proxier ("" is IPv4): its sets are
	// KUBE-6-* of family inet6 for IPv6, and its rules are ip6tables'.
	// NodeAddresses, NodePortCIDRs and NodeIP must be of the family.
	Family corev1.IPFamily

	// Scheduler is the IPVS scheduler ("" means DefaultScheduler).
	Scheduler string

	// NodeAddresses are the addresses of every device but kube-ipvs0,
	// without loopback (kernel.Links.NodeAddresses). Node ports get a
	// virtual server on each, and an external or load balancer IP found
	// among them is not bound to kube-ipvs0. Upstream:
	// GetAllLocalAddressesExcept(defaultDummyDevice).
	NodeAddresses []netip.Addr
	// NodePortCIDRs, when set, limits node ports to the NodeAddresses
	// inside them (nodePortAddresses).
	NodePortCIDRs []netip.Prefix
	// NodeIP is the node's primary address: a load balancer whose source
	// ranges contain it stays reachable from the node itself.
	NodeIP netip.Addr

	// LocalDetector tells pod traffic apart (from clusterCIDR); traffic to
	// a cluster IP from elsewhere is masqueraded. nil detects nothing, and
	// then traffic from a service address is masqueraded instead, as
	// upstream does.
	LocalDetector *localtraffic.Detector
	// MasqueradeBit is the fwmark bit KUBE-MARK-MASQ sets (0..31).
	MasqueradeBit int
	// MasqueradeAll masquerades all traffic to cluster IPs.
	MasqueradeAll bool
	// RandomFully adds --random-fully to the MASQUERADE rule
	// (proxy/iptables/kernel.Runner.HasRandomFully).
	RandomFully bool
}

func (s *Settings) scheduler() string {
	if s.Scheduler == "" {
		return DefaultScheduler
	}
	return s.Scheduler
}

// masqueradeMark is upstream's spelling of the mark: fmt.Sprintf("%#08x").
func (s *Settings) masqueradeMark() string {
	return fmt.Sprintf("%#08x", 1<<uint(s.MasqueradeBit))
}

// nodePortIPs are the addresses node ports listen on.
func (s *Settings) nodePortIPs() []netip.Addr {
	if len(s.NodePortCIDRs) == 0 {
		return s.NodeAddresses
	}
	var out []netip.Addr
	for _, a := range s.NodeAddresses {
		for _, p := range s.NodePortCIDRs {
			if p.Contains(a) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

func (s *Settings) isNodeAddress(a netip.Addr) bool {
	for _, n := range s.NodeAddresses {
		if n == a {
			return true
		}
	}
	return false
}
