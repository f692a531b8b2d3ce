package iptables

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/iptables/localtraffic"
)

// DefaultMasqueradeBit is upstream's --iptables-masquerade-bit default: the
// mark 0x4000.
const DefaultMasqueradeBit = 14

// Options are the renderer's fixed settings, the rendering-relevant subset
// of kube-proxy's configuration.
type Options struct {
	// Family is the address family the renderer programs, as upstream runs
	// one proxier per family: IPv6 writes ip6tables rules (no localhost
	// node ports, no KUBE-FIREWALL rule, ICMPv6 rejects). The zero value
	// is IPv4.
	Family corev1.IPFamily

	// ClusterCIDR is the pod network, e.g. "10.244.0.0/16". Traffic to a
	// cluster IP from outside it is masqueraded, and pod traffic to an
	// external destination of an externalTrafficPolicy Local service
	// short-circuits to the Cluster chain. Upstream: --cluster-cidr with
	// the ClusterCIDR local-traffic detector. Ignored when LocalDetector is
	// set; when both are empty nothing is detected as local, as upstream's
	// no-op detector.
	ClusterCIDR string
	// LocalDetector overrides ClusterCIDR with another way of telling pod
	// traffic apart (by bridge or interface prefix).
	LocalDetector *localtraffic.Detector

	// MasqueradeBit is the fwmark bit that asks for SNAT; 0 means
	// DefaultMasqueradeBit (bit 0 itself cannot be chosen).
	MasqueradeBit int
	// MasqueradeAll SNATs all traffic to cluster IPs. Upstream:
	// --masquerade-all.
	MasqueradeAll bool
	// RandomFully adds --random-fully to the MASQUERADE rule; set it from
	// Runner.HasRandomFully.
	RandomFully bool

	// NodeIP is this node's primary address of Family. A load balancer whose source
	// ranges include it also accepts packets sourced from its own VIPs (the
	// node reaching the VIP through a local route).
	NodeIP netip.Addr
	// NodePortAddresses, when non-empty, limits node ports to these
	// addresses (upstream --nodeport-addresses resolved to this node's IPs).
	// Empty means every local address, unless NodePortCIDRs says otherwise.
	NodePortAddresses []netip.Addr
	// NodePortCIDRs are the --nodeport-addresses CIDRs NodePortAddresses
	// were resolved from, of both families (each renderer reads its
	// own). When set, as upstream: a CIDR /0 of Family (or no CIDR of
	// Family at all) means every local address; otherwise node ports
	// answer on NodePortAddresses only, which may be none; and localhost
	// node ports are off unless a CIDR covers 127.0.0.0.
	NodePortCIDRs []netip.Prefix
	// LocalhostNodePorts makes IPv4 node ports answer on 127.0.0.0/8 and
	// adds kubelet's KUBE-FIREWALL rule that guards it; an IPv6 renderer
	// ignores it (as upstream: localhost node ports never work on IPv6). It only works with the
	// sysctl net.ipv4.conf.all.route_localnet=1, which this package does not
	// set (the proxy's iptables mode does, see proxy/iptablessetup.go).
	// Upstream's configuration defaults it to true, as proxy/config does;
	// the zero Options has it false.
	LocalhostNodePorts bool
	// ConntrackTCPBeLiberal leaves out the rule that drops packets conntrack
	// marks INVALID, as upstream does when the sysctl
	// net.netfilter.nf_conntrack_tcp_be_liberal is non-zero.
	ConntrackTCPBeLiberal bool
}

// masqueradeMark is the mark in upstream's spelling: fmt.Sprintf("%#08x",
// 1<<bit), which gives "0x00004000" for bit 14. iptables-save prints it back
// as 0x4000.
func (o *Options) masqueradeMark() string {
	bit := o.MasqueradeBit
	if bit == 0 {
		bit = DefaultMasqueradeBit
	}
	return fmt.Sprintf("%#08x", 1<<uint(bit))
}

// ipv4Loopback is upstream's ipv4LoopbackStart: a CIDR containing it lets
// node ports answer on localhost.
var ipv4Loopback = netip.MustParseAddr("127.0.0.0")

// nodePortsOnAllAddresses reports whether node ports answer on every local
// address (the addrtype LOCAL rule) rather than on NodePortAddresses.
// Upstream: NodePortAddresses.MatchAll, of the CIDRs of the renderer's
// family (none of them means every address).
func (o *Options) nodePortsOnAllAddresses() bool {
	if len(o.NodePortCIDRs) == 0 {
		return len(o.NodePortAddresses) == 0
	}
	ofFamily := 0
	for _, p := range o.NodePortCIDRs {
		if !o.ofFamily(p.Addr()) {
			continue
		}
		ofFamily++
		if p.Bits() == 0 {
			return true
		}
	}
	return ofFamily == 0
}

// localhostNodePortsInEffect is LocalhostNodePorts as upstream's NewProxier
// settles it: off when the node-port CIDRs leave out 127.0.0.0/8, and
// always off for IPv6 (whose node-port CIDRs never hold an IPv4 loopback).
func (o *Options) localhostNodePortsInEffect() bool {
	if o.isIPv6() {
		return false
	}
	if !o.LocalhostNodePorts || len(o.NodePortCIDRs) == 0 || o.nodePortsOnAllAddresses() {
		return o.LocalhostNodePorts
	}
	for _, p := range o.NodePortCIDRs {
		if p.Addr().Is4() && (p.Addr().IsLoopback() || p.Contains(ipv4Loopback)) {
			return true
		}
	}
	return false
}

func (o *Options) localDetector() (*localtraffic.Detector, error) {
	if o.LocalDetector != nil {
		return o.LocalDetector, nil
	}
	if o.ClusterCIDR == "" {
		return &localtraffic.Detector{}, nil
	}
	p, err := netip.ParsePrefix(o.ClusterCIDR)
	if err != nil {
		return nil, fmt.Errorf("cluster CIDR %q: %w", o.ClusterCIDR, err)
	}
	if !o.ofFamily(p.Addr()) {
		return nil, fmt.Errorf("cluster CIDR %q: not of the rendered family %s", o.ClusterCIDR, o.family())
	}
	return localtraffic.ByCIDR(o.ClusterCIDR)
}

// family is Family with the zero value spelled IPv4.
func (o *Options) family() corev1.IPFamily {
	if o.Family == "" {
		return corev1.IPv4Protocol
	}
	return o.Family
}

// isIPv6 reports whether the renderer programs IPv6.
func (o *Options) isIPv6() bool { return o.Family == corev1.IPv6Protocol }

// ofFamily reports whether a is an address of the renderer's family.
func (o *Options) ofFamily(a netip.Addr) bool {
	a = a.Unmap()
	if o.isIPv6() {
		return a.Is6()
	}
	return a.Is4()
}

func (o *Options) validate() error {
	if o.Family != "" && o.Family != corev1.IPv4Protocol && o.Family != corev1.IPv6Protocol {
		return fmt.Errorf("IP family %q: want IPv4 or IPv6", o.Family)
	}
	if o.MasqueradeBit < 0 || o.MasqueradeBit > 31 {
		return fmt.Errorf("masquerade bit %d: must be within 0..31", o.MasqueradeBit)
	}
	for _, a := range append([]netip.Addr{o.NodeIP}, o.NodePortAddresses...) {
		if a.IsValid() && !o.ofFamily(a) {
			return fmt.Errorf("address %s: not of the rendered family %s", a, o.family())
		}
	}
	return nil
}
