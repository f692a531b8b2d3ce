package nftables_test

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

// ipv6Options are an IPv6 node's: kind's IPv6 pod and service subnets.
func ipv6Options() nftables.Options {
	return nftables.Options{
		Family:        corev1.IPv6Protocol,
		LocalDetector: nftables.DetectLocalByCIDR(netip.MustParsePrefix("fd00:10:244::/56")),
		NodeIP:        netip.MustParseAddr("fd00:192:168::10"),
	}
}

func ipv6Slice(name string, endpoints ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return fixtures.IPv6EndpointSlice("default", name, []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, endpoints...)
}

func ipv6GoldenCases() []goldenCase {
	http := func(nodePort int32) []corev1.ServicePort {
		return []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, nodePort)}
	}
	return []goldenCase{
		{
			name: "ipv6_loadbalancer_source_ranges_etp_local",
			services: []*corev1.Service{fixtures.Service("default", "lb", "fd00:10:96::30", http(30081), fixtures.SingleStackIPv6,
				fixtures.LoadBalancer("2001:db8:ff::10", "2001:db8:100::/48", "fd00:192:168::/64"), fixtures.ExternalIPs("2001:db8:ee::1"), fixtures.ExternalTrafficPolicyLocal)},
			slices: []*discoveryv1.EndpointSlice{ipv6Slice("lb", fixtures.Endpoint("fd00:10:244::5", nodeA), fixtures.Endpoint("fd00:10:244:1::6", nodeB))},
		},
		{
			name: "ipv6_no_endpoints_service_cidrs_nodeport_addresses",
			opts: func(o *nftables.Options) {
				o.MasqueradeAll = true
				o.ServiceCIDRs = []netip.Prefix{netip.MustParsePrefix("fd00:10:96::/112")}
				o.NodePortCIDRs = []netip.Prefix{netip.MustParsePrefix("fd00:192:168::/64"), netip.MustParsePrefix("::1/128")}
				o.NodePortAddresses = []netip.Addr{netip.MustParseAddr("fd00:192:168::10"), netip.MustParseAddr("::1")}
			},
			services: []*corev1.Service{
				fixtures.Service("default", "empty", "fd00:10:96::40", http(30040), fixtures.SingleStackIPv6, fixtures.NodePortType),
				fixtures.Service("default", "web", "fd00:10:96::20", http(30080), fixtures.SingleStackIPv6, fixtures.NodePortType, fixtures.ClientIPAffinity(600)),
			},
			slices: []*discoveryv1.EndpointSlice{ipv6Slice("web", fixtures.Endpoint("fd00:10:244::5", nodeA), fixtures.Endpoint("fd00:10:244:1::6", nodeB))},
		},
	}
}

// TestGoldenDumpIPv6 renders IPv6 snapshots into the ip6 kube-proxy table
// in one full sync and compares the whole Dump() with
// testdata/NAME.golden.
func TestGoldenDumpIPv6(t *testing.T) {
	for _, c := range ipv6GoldenCases() {
		t.Run(c.name, func(t *testing.T) {
			opts := ipv6Options()
			if c.opts != nil {
				c.opts(&opts)
			}
			s, fake := newSyncer(t, opts, nil)
			mustSync(t, s, model.BuildFamily(corev1.IPv6Protocol, c.services, c.slices, nodeA))
			dump := fake.Dump()
			golden.Check(t, c.name+".golden", []byte(dump))
			if !strings.HasPrefix(dump, "add table ip6 kube-proxy") || strings.Contains(dump, " ip kube-proxy") {
				t.Errorf("not the ip6 table:\n%s", dump)
			}
		})
	}
}
