package iptables_test

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
)

type goldenCase struct {
	name    string
	cluster cluster
	opts    func(*iptables.Options)
}

func goldenCases() []goldenCase {
	tcp := corev1.ProtocolTCP
	udp := corev1.ProtocolUDP
	return []goldenCase{
		{name: "clusterip_1_endpoint", cluster: clusterIPService(1)},
		{name: "clusterip_2_endpoints", cluster: clusterIPService(2)},
		{name: "clusterip_3_endpoints", cluster: clusterIPService(3)},
		{name: "nodeport", cluster: cluster{
			services: []*corev1.Service{fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 30080)}, fixtures.NodePortType)},
			slices: []*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)},
				fixtures.Endpoint("10.244.1.1", testNodeName), fixtures.Endpoint("10.244.2.1", testOtherNode))},
		}},
		{name: "named_and_unnamed_ports", cluster: cluster{
			services: []*corev1.Service{
				fixtures.Service("default", "kubernetes", "10.96.0.1", []corev1.ServicePort{fixtures.ServicePort("https", tcp, 443, 0)}),
				fixtures.Service("default", "nginx", "10.96.0.30", []corev1.ServicePort{fixtures.ServicePort("", tcp, 80, 0)}),
				fixtures.Service("kube-system", "kube-dns", "10.96.0.10", []corev1.ServicePort{fixtures.ServicePort("dns", udp, 53, 0), fixtures.ServicePort("dns-tcp", tcp, 53, 0)}),
			},
			slices: []*discoveryv1.EndpointSlice{
				fixtures.EndpointSlice("default", "kubernetes", []discoveryv1.EndpointPort{fixtures.EndpointPort("https", tcp, 6443)}, fixtures.Endpoint(testNodeIP, "")),
				fixtures.EndpointSlice("default", "nginx", []discoveryv1.EndpointPort{fixtures.EndpointPort("", tcp, 80)}, fixtures.Endpoint("10.244.169.147", testOtherNode)),
				fixtures.EndpointSlice("kube-system", "kube-dns", []discoveryv1.EndpointPort{fixtures.EndpointPort("dns", udp, 53), fixtures.EndpointPort("dns-tcp", tcp, 53)},
					fixtures.Endpoint("10.244.0.2", testNodeName), fixtures.Endpoint("10.244.0.3", testNodeName)),
			},
		}},
		{name: "multiport_httpserver", cluster: cluster{
			services: []*corev1.Service{fixtures.Service("default", "httpserver", "10.96.0.40",
				[]corev1.ServicePort{fixtures.ServicePort("http", tcp, 3000, 30000), fixtures.ServicePort("metrics", tcp, 8080, 30080)}, fixtures.NodePortType)},
			slices: []*discoveryv1.EndpointSlice{fixtures.EndpointSlice("default", "httpserver",
				[]discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 3000), fixtures.EndpointPort("metrics", tcp, 8080)},
				fixtures.Endpoint("10.244.1.5", testNodeName), fixtures.Endpoint("10.244.2.6", testOtherNode))},
		}},
		{name: "no_endpoints", cluster: cluster{
			services: []*corev1.Service{
				fixtures.Service("default", "empty", "10.96.0.50", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 0)}),
				fixtures.Service("default", "empty-nodeport", "10.96.0.51", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 30051)}, fixtures.NodePortType),
			},
		}},
		{name: "etp_local", cluster: cluster{
			services: []*corev1.Service{
				fixtures.Service("default", "local", "10.96.0.60", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 30060)}, fixtures.NodePortType, fixtures.ExternalTrafficPolicyLocal),
				fixtures.Service("default", "remote-only", "10.96.0.61", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 30061)}, fixtures.NodePortType, fixtures.ExternalTrafficPolicyLocal),
			},
			slices: []*discoveryv1.EndpointSlice{
				fixtures.EndpointSlice("default", "local", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)},
					fixtures.Endpoint("10.244.1.1", testNodeName), fixtures.Endpoint("10.244.2.1", testOtherNode)),
				fixtures.EndpointSlice("default", "remote-only", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)},
					fixtures.Endpoint("10.244.2.2", testOtherNode)),
			},
		}},
		{name: "masquerade_all", cluster: clusterIPService(2), opts: func(o *iptables.Options) { o.MasqueradeAll = true }},
		{name: "no_cluster_cidr", cluster: clusterIPService(2), opts: func(o *iptables.Options) { o.ClusterCIDR = ""; o.RandomFully = false }},
		{name: "session_affinity", cluster: func() cluster {
			c := clusterIPService(2)
			c.services[0].Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			c.services[0].Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](600)}}
			return c
		}()},
		{name: "internal_traffic_policy_local", cluster: func() cluster {
			c := cluster{
				services: []*corev1.Service{
					fixtures.Service("default", "itp", "10.96.0.70", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 0)}),
					fixtures.Service("default", "itp-remote", "10.96.0.71", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 0)}),
				},
				slices: []*discoveryv1.EndpointSlice{
					fixtures.EndpointSlice("default", "itp", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)},
						fixtures.Endpoint("10.244.1.1", testNodeName), fixtures.Endpoint("10.244.2.1", testOtherNode)),
					fixtures.EndpointSlice("default", "itp-remote", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)},
						fixtures.Endpoint("10.244.2.2", testOtherNode)),
				},
			}
			for _, s := range c.services {
				s.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
			}
			return c
		}()},
		{name: "upstream_overall", cluster: upstreamOverallCluster(), opts: upstreamOverallOptions},
	}
}

func TestGoldenFullSync(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			opts := testOptions()
			if c.opts != nil {
				c.opts(&opts)
			}
			res := newRenderer(t, opts).Render(c.cluster.snapshot())
			if !res.FullSync {
				t.Error("first render of a renderer must be a full sync")
			}
			golden.Check(t, c.name+".golden", res.Payload())
			checkAllJumpTargetsDeclared(t, res.Payload())
			// What Sync streams to iptables-restore is the same payload.
			var streamed bytes.Buffer
			if n, err := res.WriteTo(&streamed); err != nil || n != int64(res.Bytes()) || !bytes.Equal(streamed.Bytes(), res.Payload()) {
				t.Errorf("WriteTo wrote %d bytes (err %v), Bytes() is %d: not the joined payload", n, err, res.Bytes())
			}

			// The kernel (here the fake) must accept it.
			fake := iptablestest.NewFakeRunner()
			if err := fake.Restore(res.Payload()); err != nil {
				t.Fatalf("fake iptables-restore rejected the payload: %v", err)
			}
		})
	}
}
