package iptables_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// checkGolden compares got with testdata/NAME.golden. With -update it
// rewrites the file instead.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("writing %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run `go test -run %s -update` to create it): %v", path, t.Name(), err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("payload differs from %s (rerun with -update if the change is intended)\n%s", path, lineDiff(string(want), string(got)))
	}
}

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
			services: []*corev1.Service{svc("default", "web", "10.96.0.20", []corev1.ServicePort{port("http", tcp, 80, 30080)}, nodePortType)},
			slices: []*discoveryv1.EndpointSlice{epSlice("default", "web", []discoveryv1.EndpointPort{epPort("http", tcp, 8080)},
				ep("10.244.1.1", testNodeName), ep("10.244.2.1", testOtherNode))},
		}},
		{name: "named_and_unnamed_ports", cluster: cluster{
			services: []*corev1.Service{
				svc("default", "kubernetes", "10.96.0.1", []corev1.ServicePort{port("https", tcp, 443, 0)}),
				svc("default", "nginx", "10.96.0.30", []corev1.ServicePort{port("", tcp, 80, 0)}),
				svc("kube-system", "kube-dns", "10.96.0.10", []corev1.ServicePort{port("dns", udp, 53, 0), port("dns-tcp", tcp, 53, 0)}),
			},
			slices: []*discoveryv1.EndpointSlice{
				epSlice("default", "kubernetes", []discoveryv1.EndpointPort{epPort("https", tcp, 6443)}, ep(testNodeIP, "")),
				epSlice("default", "nginx", []discoveryv1.EndpointPort{epPort("", tcp, 80)}, ep("10.244.169.147", testOtherNode)),
				epSlice("kube-system", "kube-dns", []discoveryv1.EndpointPort{epPort("dns", udp, 53), epPort("dns-tcp", tcp, 53)},
					ep("10.244.0.2", testNodeName), ep("10.244.0.3", testNodeName)),
			},
		}},
		{name: "multiport_httpserver", cluster: cluster{
			services: []*corev1.Service{svc("default", "httpserver", "10.96.0.40",
				[]corev1.ServicePort{port("http", tcp, 3000, 30000), port("metrics", tcp, 8080, 30080)}, nodePortType)},
			slices: []*discoveryv1.EndpointSlice{epSlice("default", "httpserver",
				[]discoveryv1.EndpointPort{epPort("http", tcp, 3000), epPort("metrics", tcp, 8080)},
				ep("10.244.1.5", testNodeName), ep("10.244.2.6", testOtherNode))},
		}},
		{name: "no_endpoints", cluster: cluster{
			services: []*corev1.Service{
				svc("default", "empty", "10.96.0.50", []corev1.ServicePort{port("http", tcp, 80, 0)}),
				svc("default", "empty-nodeport", "10.96.0.51", []corev1.ServicePort{port("http", tcp, 80, 30051)}, nodePortType),
			},
		}},
		{name: "etp_local", cluster: cluster{
			services: []*corev1.Service{
				svc("default", "local", "10.96.0.60", []corev1.ServicePort{port("http", tcp, 80, 30060)}, nodePortType, etpLocal),
				svc("default", "remote-only", "10.96.0.61", []corev1.ServicePort{port("http", tcp, 80, 30061)}, nodePortType, etpLocal),
			},
			slices: []*discoveryv1.EndpointSlice{
				epSlice("default", "local", []discoveryv1.EndpointPort{epPort("http", tcp, 8080)},
					ep("10.244.1.1", testNodeName), ep("10.244.2.1", testOtherNode)),
				epSlice("default", "remote-only", []discoveryv1.EndpointPort{epPort("http", tcp, 8080)},
					ep("10.244.2.2", testOtherNode)),
			},
		}},
		{name: "masquerade_all", cluster: clusterIPService(2), opts: func(o *iptables.Options) { o.MasqueradeAll = true }},
		{name: "no_cluster_cidr", cluster: clusterIPService(2), opts: func(o *iptables.Options) { o.ClusterCIDR = ""; o.RandomFully = false }},
		{name: "session_affinity", cluster: func() cluster {
			c := clusterIPService(2)
			c.services[0].Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			c.services[0].Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr[int32](600)}}
			return c
		}()},
		{name: "internal_traffic_policy_local", cluster: func() cluster {
			c := cluster{
				services: []*corev1.Service{
					svc("default", "itp", "10.96.0.70", []corev1.ServicePort{port("http", tcp, 80, 0)}),
					svc("default", "itp-remote", "10.96.0.71", []corev1.ServicePort{port("http", tcp, 80, 0)}),
				},
				slices: []*discoveryv1.EndpointSlice{
					epSlice("default", "itp", []discoveryv1.EndpointPort{epPort("http", tcp, 8080)},
						ep("10.244.1.1", testNodeName), ep("10.244.2.1", testOtherNode)),
					epSlice("default", "itp-remote", []discoveryv1.EndpointPort{epPort("http", tcp, 8080)},
						ep("10.244.2.2", testOtherNode)),
				},
			}
			for _, s := range c.services {
				s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
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
			checkGolden(t, c.name, res.Payload())
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
