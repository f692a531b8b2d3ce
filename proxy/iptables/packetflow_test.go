package iptables_test

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
)

// packetFlowCluster has one service per behaviour the packet tests check.
func packetFlowCluster() cluster {
	tcp := corev1.ProtocolTCP
	http := func(n ...discoveryv1.Endpoint) []discoveryv1.Endpoint { return n }
	return cluster{
		services: []*corev1.Service{
			fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 30080)}, fixtures.NodePortType),
			fixtures.Service("default", "local-none", "10.96.0.21", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 30081)}, fixtures.NodePortType, fixtures.ExternalTrafficPolicyLocal),
			fixtures.Service("default", "local-some", "10.96.0.22", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 30082)}, fixtures.NodePortType, fixtures.ExternalTrafficPolicyLocal),
			fixtures.Service("default", "empty", "10.96.0.50", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 30050)}, fixtures.NodePortType),
		},
		slices: []*discoveryv1.EndpointSlice{
			fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)},
				http(fixtures.Endpoint("10.244.1.1", testNodeName), fixtures.Endpoint("10.244.2.1", testOtherNode))...),
			fixtures.EndpointSlice("default", "local-none", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)},
				http(fixtures.Endpoint("10.244.2.2", testOtherNode))...),
			fixtures.EndpointSlice("default", "local-some", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)},
				http(fixtures.Endpoint("10.244.1.3", testNodeName), fixtures.Endpoint("10.244.2.3", testOtherNode))...),
		},
	}
}

type packetFlowTest struct {
	name         string
	src, dst     string
	protocol     string
	port         int
	destinations []string
	// masq: "all", "none", or a destination that alone is masqueraded.
	masq     string
	rejected bool
	dropped  bool
}

func runPacketFlowTests(t *testing.T, tracer *iptablestest.Tracer, tests []packetFlowTest) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := tracer.Trace(iptablestest.Packet{
				Source:          netip.MustParseAddr(tc.src),
				Destination:     netip.MustParseAddr(tc.dst),
				Protocol:        tc.protocol,
				DestinationPort: tc.port,
			})
			var problems []string
			want := tc.destinations
			if want == nil {
				want = []string{}
			}
			got := res.Destinations()
			if got == nil {
				got = []string{}
			}
			if !slices.Equal(got, want) {
				problems = append(problems, "destinations")
			}
			switch tc.masq {
			case "all":
				if !res.AllMasqueraded() {
					problems = append(problems, "want every path masqueraded")
				}
			case "", "none":
				if res.AnyMasqueraded() {
					problems = append(problems, "want no path masqueraded")
				}
			default:
				for _, d := range got {
					if res.MasqueradedTo(d) != (d == tc.masq) {
						problems = append(problems, "want only the path to "+tc.masq+" masqueraded")
						break
					}
				}
			}
			if res.Rejected() != tc.rejected {
				problems = append(problems, "rejected")
			}
			if res.Dropped() != tc.dropped {
				problems = append(problems, "dropped")
			}
			if problems != nil {
				t.Errorf("wrong %v; want destinations %v masq=%q rejected=%v dropped=%v; got\n%s",
					problems, want, tc.masq, tc.rejected, tc.dropped, res)
			}
		})
	}
}

func TestPacketFlow(t *testing.T) {
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	// Through Sync, so that the jump rules from PREROUTING and friends are
	// in place and the tracer enters through them.
	if _, err := iptables.Sync(fake, r, packetFlowCluster().snapshot()); err != nil {
		t.Fatal(err)
	}
	tracer := &iptablestest.Tracer{Dump: fake.Dump(), NodeIPs: testNodeIPs}
	const web1, web2 = "10.244.1.1:8080", "10.244.2.1:8080"

	runPacketFlowTests(t, tracer, []packetFlowTest{
		{name: "client outside the cluster CIDR to cluster IP reaches both backends masqueraded",
			src: testOutsideIP, dst: "10.96.0.20", port: 80, destinations: []string{web1, web2}, masq: "all"},
		{name: "pod to cluster IP keeps its source",
			src: "10.244.1.7", dst: "10.96.0.20", port: 80, destinations: []string{web1, web2}, masq: "none"},
		{name: "hairpin: endpoint to its own cluster IP is masqueraded only when it picks itself",
			src: "10.244.1.1", dst: "10.96.0.20", port: 80, destinations: []string{web1, web2}, masq: web1},
		{name: "node port from outside is masqueraded",
			src: testOutsideIP, dst: testNodeIP, port: 30080, destinations: []string{web1, web2}, masq: "all"},
		{name: "node port from a pod is masqueraded too (Cluster policy)",
			src: "10.244.1.7", dst: testNodeIP, port: 30080, destinations: []string{web1, web2}, masq: "all"},
		{name: "node port with externalTrafficPolicy Local and no local endpoint drops outside traffic",
			src: testOutsideIP, dst: testNodeIP, port: 30081, dropped: true},
		{name: "externalTrafficPolicy Local: the node itself still reaches remote endpoints, masqueraded",
			src: testNodeIP, dst: testNodeIP, port: 30081, destinations: []string{"10.244.2.2:8080"}, masq: "all"},
		{name: "externalTrafficPolicy Local keeps the client IP and uses only the local endpoint",
			src: testOutsideIP, dst: testNodeIP, port: 30082, destinations: []string{"10.244.1.3:8080"}, masq: "none"},
		{name: "externalTrafficPolicy Local: pod traffic short-circuits to all endpoints",
			src: "10.244.1.7", dst: testNodeIP, port: 30082, destinations: []string{"10.244.1.3:8080", "10.244.2.3:8080"}, masq: "none"},
		{name: "cluster IP without endpoints is rejected",
			src: "10.244.1.7", dst: "10.96.0.50", port: 80, rejected: true},
		{name: "node port without endpoints is rejected",
			src: testOutsideIP, dst: testNodeIP, port: 30050, rejected: true},
		{name: "unknown cluster IP is left alone",
			src: "10.244.1.7", dst: "10.96.0.99", port: 80},
		{name: "wrong port is left alone",
			src: "10.244.1.7", dst: "10.96.0.20", port: 81},
		{name: "wrong protocol is left alone",
			src: "10.244.1.7", dst: "10.96.0.20", port: 80, protocol: "udp"},
		{name: "node port on loopback is not served without LocalhostNodePorts",
			src: "127.0.0.1", dst: "127.0.0.1", port: 30080},
	})
}

func TestPacketFlowMasqueradeAllAndNoLocalDetector(t *testing.T) {
	for _, c := range []struct {
		name string
		opts func(*iptables.Options)
		masq string
	}{
		{"masqueradeAll masquerades pod traffic", func(o *iptables.Options) { o.MasqueradeAll = true }, "all"},
		{"without a cluster CIDR nothing is masqueraded at the cluster IP", func(o *iptables.Options) { o.ClusterCIDR = "" }, "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := testOptions()
			c.opts(&opts)
			fake := iptablestest.NewFakeRunner()
			if _, err := iptables.Sync(fake, newRenderer(t, opts), clusterIPService(2).snapshot()); err != nil {
				t.Fatal(err)
			}
			tracer := &iptablestest.Tracer{Dump: fake.Dump(), NodeIPs: testNodeIPs}
			runPacketFlowTests(t, tracer, []packetFlowTest{{
				name: "pod to cluster IP", src: "10.244.9.9", dst: "10.96.0.20", port: 80,
				destinations: []string{"10.244.1.1:8080", "10.244.1.2:8080"}, masq: c.masq,
			}})
		})
	}
}

// TestPacketFlowAfterPartialSync checks that traffic follows a changed
// endpoint after a partial sync.
func TestPacketFlowAfterPartialSync(t *testing.T) {
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	c := packetFlowCluster()
	if _, err := iptables.Sync(fake, r, c.snapshot()); err != nil {
		t.Fatal(err)
	}
	c.slices[0].Endpoints[1].Addresses = []string{"10.244.2.99"}
	res, err := iptables.Sync(fake, r, c.snapshot())
	if err != nil || res.FullSync {
		t.Fatalf("second sync: full=%v err=%v, want a successful partial sync", res.FullSync, err)
	}
	tracer := &iptablestest.Tracer{Dump: fake.Dump(), NodeIPs: testNodeIPs}
	runPacketFlowTests(t, tracer, []packetFlowTest{{
		name: "pod to cluster IP", src: "10.244.1.7", dst: "10.96.0.20", port: 80,
		destinations: []string{"10.244.1.1:8080", "10.244.2.99:8080"}, masq: "none",
	}})
}

func TestPacketFlowUpstreamOverall(t *testing.T) {
	// The flows upstream's TestTracePacket checks, on upstream's cluster.
	opts := testOptions()
	upstreamOverallOptions(&opts)
	fake := iptablestest.NewFakeRunner()
	if err := fake.Restore(newRenderer(t, opts).Render(upstreamOverallCluster().snapshot()).Payload()); err != nil {
		t.Fatal(err)
	}
	tracer := &iptablestest.Tracer{Dump: fake.Dump(), NodeIPs: []netip.Addr{netip.MustParseAddr("192.168.0.2")}}
	runPacketFlowTests(t, tracer, []packetFlowTest{
		{name: "no match", src: "10.0.0.2", dst: "10.0.0.3", port: 80},
		{name: "single endpoint", src: "10.0.0.2", dst: "172.30.0.41", port: 80, destinations: []string{"10.180.0.1:80"}},
		{name: "multiple endpoints", src: "10.0.0.2", dst: "172.30.0.44", port: 80, destinations: []string{"10.180.0.4:80", "10.180.0.5:80"}},
		{name: "LOCAL, KUBE-MARK-MASQ", src: "192.168.0.2", dst: "192.168.99.22", port: 80, destinations: []string{"10.180.0.2:80"}, masq: "all"},
		{name: "DROP", src: "203.0.113.2", dst: "192.168.99.22", port: 80, dropped: true},
		{name: "REJECT", src: "10.0.0.2", dst: "172.30.0.46", port: 80, rejected: true},
		{name: "load balancer source range allowed", src: "203.0.113.7", dst: "5.6.7.8", port: 80, destinations: []string{"10.180.0.3:80"}, masq: "all"},
		{name: "load balancer source range refused", src: "203.0.113.200", dst: "5.6.7.8", port: 80, dropped: true},
	})
}
