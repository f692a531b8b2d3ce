package iptables_test

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/model"
)

// The IPv6 test cluster, kind's IPv6 defaults: pods in fd00:10:244::/56,
// services in fd00:10:96::/112, this node at fd00:192:168::10.
const (
	testClusterCIDRv6 = "fd00:10:244::/56"
	testNodeIPv6      = "fd00:192:168::10"
	testOutsideIPv6   = "2001:db8:50::50"
)

func testOptionsIPv6() iptables.Options {
	return iptables.Options{
		Family:             corev1.IPv6Protocol,
		ClusterCIDR:        testClusterCIDRv6,
		RandomFully:        true,
		NodeIP:             netip.MustParseAddr(testNodeIPv6),
		LocalhostNodePorts: true, // upstream's default; never in effect for IPv6
	}
}

// ipv6Snapshot is the IPv6 proxier's snapshot of c: IPv6 cluster IPs and
// IPv6 EndpointSlices only.
func (c cluster) ipv6Snapshot() *model.Snapshot {
	return model.BuildFamily(corev1.IPv6Protocol, c.services, c.slices, testNodeName)
}

func ipv6Service(name, clusterIP string, nodePort int32, edits ...fixtures.ServiceEdit) *corev1.Service {
	edits = append([]fixtures.ServiceEdit{fixtures.SingleStackIPv6}, edits...)
	return fixtures.Service("default", name, clusterIP, []corev1.ServicePort{fixtures.ServicePort("http", corev1.ProtocolTCP, 80, nodePort)}, edits...)
}

func ipv6Slice(name string, endpoints ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return fixtures.IPv6EndpointSlice("default", name, []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, endpoints...)
}

func ipv6GoldenCases() []goldenCase {
	return []goldenCase{
		{name: "ipv6_clusterip_3_endpoints", cluster: cluster{
			services: []*corev1.Service{ipv6Service("web", "fd00:10:96::20", 0)},
			slices: []*discoveryv1.EndpointSlice{ipv6Slice("web", fixtures.Endpoint("fd00:10:244::5", testNodeName),
				fixtures.Endpoint("fd00:10:244:1::6", testOtherNode), fixtures.Endpoint("fd00:10:244:1::7", testOtherNode))},
		}},
		{name: "ipv6_nodeport_affinity", cluster: cluster{
			services: []*corev1.Service{ipv6Service("web", "fd00:10:96::20", 30080, fixtures.NodePortType, fixtures.ClientIPAffinity(600))},
			slices:   []*discoveryv1.EndpointSlice{ipv6Slice("web", fixtures.Endpoint("fd00:10:244::5", testNodeName), fixtures.Endpoint("fd00:10:244:1::6", testOtherNode))},
		}},
		{name: "ipv6_loadbalancer_source_ranges_etp_local", cluster: cluster{
			services: []*corev1.Service{ipv6Service("lb", "fd00:10:96::30", 30081, fixtures.LoadBalancer("2001:db8:ff::10", "2001:db8:100::/48", "fd00:192:168::/64"),
				fixtures.ExternalIPs("2001:db8:ee::1"), fixtures.ExternalTrafficPolicyLocal)},
			slices: []*discoveryv1.EndpointSlice{ipv6Slice("lb", fixtures.Endpoint("fd00:10:244::5", testNodeName), fixtures.Endpoint("fd00:10:244:1::6", testOtherNode))},
		}},
		{name: "ipv6_no_endpoints_itp_local", cluster: func() cluster {
			itp := ipv6Service("itp", "fd00:10:96::41", 0)
			itp.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
			return cluster{
				services: []*corev1.Service{ipv6Service("empty", "fd00:10:96::40", 30040, fixtures.NodePortType), itp},
				slices:   []*discoveryv1.EndpointSlice{ipv6Slice("itp", fixtures.Endpoint("fd00:10:244:1::9", testOtherNode))},
			}
		}()},
		{name: "ipv6_nodeport_addresses_masquerade_all", cluster: cluster{
			services: []*corev1.Service{ipv6Service("web", "fd00:10:96::20", 30080, fixtures.NodePortType)},
			slices:   []*discoveryv1.EndpointSlice{ipv6Slice("web", fixtures.Endpoint("fd00:10:244::5", testNodeName))},
		}, opts: func(o *iptables.Options) {
			o.MasqueradeAll = true
			o.NodePortCIDRs = []netip.Prefix{netip.MustParsePrefix("fd00:192:168::/64"), netip.MustParsePrefix("::1/128")}
			o.NodePortAddresses = []netip.Addr{netip.MustParseAddr(testNodeIPv6), netip.MustParseAddr("::1")}
		}},
	}
}

// TestGoldenFullSyncIPv6 renders IPv6 snapshots with an IPv6 renderer and
// compares the whole payload with testdata/NAME.golden; the fake kernel
// must accept it.
func TestGoldenFullSyncIPv6(t *testing.T) {
	for _, c := range ipv6GoldenCases() {
		t.Run(c.name, func(t *testing.T) {
			opts := testOptionsIPv6()
			if c.opts != nil {
				c.opts(&opts)
			}
			res := newRenderer(t, opts).Render(c.cluster.ipv6Snapshot())
			golden.Check(t, c.name+".golden", res.Payload())
			checkAllJumpTargetsDeclared(t, res.Payload())
			for _, ipv4Only := range []string{"127.0.0.0/8", "KUBE-FIREWALL", "/32"} {
				if strings.Contains(string(res.Payload()), ipv4Only) {
					t.Errorf("IPv6 payload has %q", ipv4Only)
				}
			}
			if err := iptablestest.NewFakeRunner().Restore(res.Payload()); err != nil {
				t.Fatalf("fake iptables-restore rejected the payload: %v", err)
			}
		})
	}
}

// TestIPv6RendererProgramsIPv6Only: a dual-stack service and an IPv4-only
// one, with slices of both families, through the IPv6 snapshot: only the
// IPv6 cluster IP and IPv6 endpoints appear.
func TestIPv6RendererProgramsIPv6Only(t *testing.T) {
	dual := fixtures.Service("default", "dual", "10.96.0.20", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	dual.Spec.ClusterIPs = []string{"10.96.0.20", "fd00:10:96::20"}
	dual.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	c := cluster{
		services: []*corev1.Service{dual, fixtures.Service("default", "v4", "10.96.0.30", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})},
		slices: []*discoveryv1.EndpointSlice{
			fixtures.EndpointSlice("default", "dual", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.1.1", testNodeName)),
			ipv6Slice("dual", fixtures.Endpoint("fd00:10:244::1", testNodeName)),
			fixtures.EndpointSlice("default", "v4", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 8080)}, fixtures.Endpoint("10.244.1.2", testNodeName)),
		},
	}
	payload := string(newRenderer(t, testOptionsIPv6()).Render(c.ipv6Snapshot()).Payload())
	for _, want := range []string{"-d fd00:10:96::20 --dport 80", "--to-destination [fd00:10:244::1]:8080"} {
		if !strings.Contains(payload, want) {
			t.Errorf("IPv6 payload lacks %q:\n%s", want, payload)
		}
	}
	for _, unwanted := range []string{"10.96.0.", "10.244.1.", "default/v4"} {
		if strings.Contains(payload, unwanted) {
			t.Errorf("IPv6 payload has %q:\n%s", unwanted, payload)
		}
	}
}

// TestPacketFlowIPv6 traces IPv6 packets through an IPv6 sync.
func TestPacketFlowIPv6(t *testing.T) {
	c := cluster{
		services: []*corev1.Service{
			ipv6Service("web", "fd00:10:96::20", 30080, fixtures.NodePortType),
			ipv6Service("local-some", "fd00:10:96::22", 30082, fixtures.NodePortType, fixtures.ExternalTrafficPolicyLocal),
			ipv6Service("empty", "fd00:10:96::50", 30050, fixtures.NodePortType),
		},
		slices: []*discoveryv1.EndpointSlice{
			ipv6Slice("web", fixtures.Endpoint("fd00:10:244::1", testNodeName), fixtures.Endpoint("fd00:10:244:1::1", testOtherNode)),
			ipv6Slice("local-some", fixtures.Endpoint("fd00:10:244::3", testNodeName), fixtures.Endpoint("fd00:10:244:1::3", testOtherNode)),
		},
	}
	fake := iptablestest.NewFakeRunner()
	if _, err := iptables.Sync(fake, newRenderer(t, testOptionsIPv6()), c.ipv6Snapshot()); err != nil {
		t.Fatal(err)
	}
	tracer := &iptablestest.Tracer{Dump: fake.Dump(), NodeIPs: []netip.Addr{netip.MustParseAddr(testNodeIPv6)}}
	// Endpoints in upstream's order, by their string: "…:1::1" before "…::1".
	const web1, web2 = "[fd00:10:244:1::1]:8080", "[fd00:10:244::1]:8080"
	runPacketFlowTests(t, tracer, []packetFlowTest{
		{name: "client outside the cluster CIDR to the IPv6 cluster IP reaches both backends masqueraded",
			src: testOutsideIPv6, dst: "fd00:10:96::20", port: 80, destinations: []string{web1, web2}, masq: "all"},
		{name: "pod to the IPv6 cluster IP keeps its source",
			src: "fd00:10:244::7", dst: "fd00:10:96::20", port: 80, destinations: []string{web1, web2}, masq: "none"},
		{name: "IPv6 node port from outside is masqueraded",
			src: testOutsideIPv6, dst: testNodeIPv6, port: 30080, destinations: []string{web1, web2}, masq: "all"},
		{name: "IPv6 has no localhost node ports",
			src: "::1", dst: "::1", port: 30080},
		{name: "externalTrafficPolicy Local keeps the IPv6 client address and uses only the local endpoint",
			src: testOutsideIPv6, dst: testNodeIPv6, port: 30082, destinations: []string{"[fd00:10:244::3]:8080"}, masq: "none"},
		{name: "IPv6 cluster IP without endpoints is rejected",
			src: "fd00:10:244::7", dst: "fd00:10:96::50", port: 80, rejected: true},
	})
}
