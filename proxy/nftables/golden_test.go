package nftables_test

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

func defaultOptions() nftables.Options {
	return nftables.Options{
		LocalDetector: nftables.DetectLocalByCIDR(netip.MustParsePrefix("10.244.0.0/16")),
		NodeIP:        netip.MustParseAddr("192.168.0.10"),
	}
}

type goldenCase struct {
	name     string
	opts     func(*nftables.Options)
	services []*corev1.Service
	slices   []*discoveryv1.EndpointSlice
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{name: "empty"},
		{
			name:     "clusterip_3_endpoints",
			services: []*corev1.Service{fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})},
			slices: []*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)},
				fixtures.Endpoint("10.244.1.1", nodeA), fixtures.Endpoint("10.244.2.1", nodeB), fixtures.Endpoint("10.244.2.2", nodeB))},
		},
		{
			name:     "clusterip_no_endpoints",
			services: []*corev1.Service{fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})},
		},
		{
			name:     "nodeport_split_across_nodes",
			services: []*corev1.Service{fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30080)}, fixtures.NodePortType)},
			slices:   []*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.1.1", nodeA), fixtures.Endpoint("10.244.2.1", nodeB))},
		},
		{
			name:     "nodeport_etp_local_no_local_endpoints",
			services: []*corev1.Service{fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30080)}, fixtures.NodePortType, fixtures.ExternalTrafficPolicyLocal)},
			slices:   []*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.2.1", nodeB))},
		},
		{
			name: "loadbalancer_source_ranges_affinity",
			services: []*corev1.Service{fixtures.Service("default", "lb", "10.96.0.30", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30081)},
				fixtures.LoadBalancer("203.0.113.7", "192.168.0.0/24", "198.51.100.0/24"), fixtures.ExternalIPs("198.51.100.9"), fixtures.ClientIPAffinity(600))},
			slices: []*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "lb", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.1.1", nodeA), fixtures.Endpoint("10.244.2.1", nodeB))},
		},
		{
			name: "nodeport_addresses_masquerade_all_service_cidrs",
			opts: func(o *nftables.Options) {
				o.LocalDetector = nftables.DetectLocalByInterfaceNamePrefix("veth")
				o.MasqueradeAll = true
				o.MasqueradeBit = 5
				o.NodePortCIDRs = []netip.Prefix{netip.MustParsePrefix("192.168.0.0/24")}
				o.NodePortAddresses = []netip.Addr{netip.MustParseAddr("192.168.0.10")}
				o.ServiceCIDRs = []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")}
			},
			services: []*corev1.Service{fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30080)}, fixtures.NodePortType)},
			slices:   []*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.1.1", nodeA))},
		},
		{
			name: "ipv6",
			opts: func(o *nftables.Options) {
				o.Family = corev1.IPv6Protocol
				o.LocalDetector = nftables.DetectLocalByCIDR(netip.MustParsePrefix("fd00:10:244::/56"))
				o.NodeIP = netip.MustParseAddr("fd00::10")
			},
			services: []*corev1.Service{fixtures.Service("default", "web6", "fd00:10:96::20", []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, 30080)}, fixtures.NodePortType, fixtures.SingleStackIPv6, fixtures.ClientIPAffinity(60))},
			slices: []*discoveryv1.EndpointSlice{fixtures.IPv6EndpointSlice("default", "web6", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)},
				fixtures.Endpoint("fd00:10:244:1::1", nodeA), fixtures.Endpoint("fd00:10:244:2::1", nodeB))},
		},
	}
}

// TestGoldenDump renders each case in one full sync into knftables.Fake
// and compares the whole Dump() with testdata/NAME.golden.
func TestGoldenDump(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			opts := defaultOptions()
			if c.opts != nil {
				c.opts(&opts)
			}
			s, fake := newSyncer(t, opts, nil)
			mustSync(t, s, model.BuildFamily(opts.Family, c.services, c.slices, nodeA))
			golden.Check(t, c.name+".golden", []byte(fake.Dump()))
		})
	}
}
