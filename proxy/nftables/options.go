package nftables

import (
	"fmt"
	"net/netip"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// DefaultMasqueradeBit is upstream's masqueradeBit default: the mark 0x4000.
const DefaultMasqueradeBit = 14

// Options are the renderer's fixed settings, the rendering-relevant subset
// of kube-proxy's configuration, for one IP family.
type Options struct {
	// Family is IPv4 (table ip kube-proxy; the zero value) or IPv6
	// (table ip6 kube-proxy).
	Family corev1.IPFamily
	// MasqueradeBit is the fwmark bit that asks for SNAT; 0 means
	// DefaultMasqueradeBit.
	MasqueradeBit int
	// MasqueradeAll masquerades all traffic to cluster IPs.
	MasqueradeAll bool
	// LocalDetector tells pod traffic apart (nil: upstream's no-op
	// detector, nothing is local).
	LocalDetector *LocalDetector
	// NodeIP is this node's primary address of Family: load balancer source
	// ranges that contain it also admit the load balancer's own VIPs.
	NodeIP netip.Addr
	// NodePortCIDRs are --nodeport-addresses. None of Family, or a
	// zero-length one, means node ports answer on every local address
	// (`fib daddr type local`); otherwise only on NodePortAddresses (the
	// nodeport-ips set).
	NodePortCIDRs []netip.Prefix
	// NodePortAddresses are this node's addresses inside NodePortCIDRs
	// (upstream: NodePortAddresses.GetNodeIPs). Loopback addresses are
	// skipped: nftables mode has no localhost node ports.
	NodePortAddresses []netip.Addr
	// ServiceCIDRs are the service CIDRs of Family (upstream:
	// OnServiceCIDRsChanged); traffic to an unallocated cluster IP in them
	// is dropped. Empty: no such rule.
	ServiceCIDRs []netip.Prefix
}

// LocalDetector holds the nftables matches that tell traffic from this
// node's pods apart. Upstream: proxyutil.LocalTrafficDetector's
// IfLocalNFT/IfNotLocalNFT.
type LocalDetector struct {
	IfLocal    []string
	IfNotLocal []string
}

// implemented reports whether the detector matches anything.
func (d *LocalDetector) implemented() bool { return d != nil && len(d.IfLocal) > 0 }

// DetectLocalByCIDR treats traffic from cidr as pod traffic
// ("ip saddr 10.244.0.0/16").
func DetectLocalByCIDR(cidr netip.Prefix) *LocalDetector {
	x := "ip"
	if cidr.Addr().Is6() {
		x = "ip6"
	}
	s := cidr.String()
	return &LocalDetector{IfLocal: []string{x, "saddr", s}, IfNotLocal: []string{x, "saddr", "!=", s}}
}

// DetectLocalByBridgeInterface treats traffic arriving on iface as pod
// traffic.
func DetectLocalByBridgeInterface(iface string) *LocalDetector {
	return &LocalDetector{IfLocal: []string{"iifname", iface}, IfNotLocal: []string{"iifname", "!=", iface}}
}

// DetectLocalByInterfaceNamePrefix treats traffic arriving on interfaces
// named prefix* as pod traffic.
func DetectLocalByInterfaceNamePrefix(prefix string) *LocalDetector {
	return &LocalDetector{IfLocal: []string{"iifname", prefix + "*"}, IfNotLocal: []string{"iifname", "!=", prefix + "*"}}
}

func (o *Options) isIPv6() bool { return o.Family == corev1.IPv6Protocol }

// ipX is the family's address match keyword ("ip" or "ip6").
func (o *Options) ipX() string {
	if o.isIPv6() {
		return "ip6"
	}
	return "ip"
}

// addrType is the family's nftables address type.
func (o *Options) addrType() string {
	if o.isIPv6() {
		return "ipv6_addr"
	}
	return "ipv4_addr"
}

// noLocalhost keeps node ports off the loopback address.
func (o *Options) noLocalhost() string {
	if o.isIPv6() {
		return "ip6 daddr != ::1"
	}
	return "ip daddr != 127.0.0.0/8"
}

// masqueradeMark is upstream's fmt.Sprintf("%#08x", 1<<bit): "0x00004000".
func (o *Options) masqueradeMark() string {
	bit := o.MasqueradeBit
	if bit == 0 {
		bit = DefaultMasqueradeBit
	}
	return fmt.Sprintf("%#08x", 1<<uint(bit))
}

func (o *Options) masqueradeRule() string { return "mark set mark or " + o.masqueradeMark() }

func (o *Options) inFamily(a netip.Addr) bool { return a.Is6() == o.isIPv6() }

// nodePortsOnAllAddresses is upstream's NodePortAddresses.MatchAll for the
// family: no CIDR of the family, or a zero-length one.
func (o *Options) nodePortsOnAllAddresses() bool {
	n := 0
	for _, p := range o.NodePortCIDRs {
		if !o.inFamily(p.Addr()) {
			continue
		}
		n++
		if p.Bits() == 0 {
			return true
		}
	}
	return n == 0
}

func (o *Options) validate() error {
	if o.Family != "" && o.Family != corev1.IPv4Protocol && o.Family != corev1.IPv6Protocol {
		return fmt.Errorf("family %q: must be IPv4 or IPv6", o.Family)
	}
	if o.MasqueradeBit < 0 || o.MasqueradeBit > 31 {
		return fmt.Errorf("masquerade bit %d: must be within 0..31", o.MasqueradeBit)
	}
	for _, a := range append([]netip.Addr{o.NodeIP}, o.NodePortAddresses...) {
		if a.IsValid() && !o.inFamily(a) {
			return fmt.Errorf("address %s: not of family %s", a, o.family())
		}
	}
	for _, p := range o.ServiceCIDRs {
		if !o.inFamily(p.Addr()) {
			return fmt.Errorf("service CIDR %s: not of family %s", p, o.family())
		}
	}
	return nil
}

func (o *Options) family() corev1.IPFamily {
	if o.Family == "" {
		return corev1.IPv4Protocol
	}
	return o.Family
}

func itoa[T ~int32 | ~int](n T) string { return strconv.Itoa(int(n)) }
