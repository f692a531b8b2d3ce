package nftables_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
)

const (
	nodeA = "node-a"
	nodeB = "node-b"
)

// checkGolden compares got with testdata/NAME.golden; -update rewrites it.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name+".golden", []byte(got))
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *fakeClock                   { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func family(o nftables.Options) knftables.Family {
	if o.Family == corev1.IPv6Protocol {
		return knftables.IPv6Family
	}
	return knftables.IPv4Family
}

// newSyncer is a Syncer over a fresh knftables.Fake.
func newSyncer(t *testing.T, opts nftables.Options, clock *fakeClock) (*nftables.Syncer, *knftables.Fake) {
	t.Helper()
	r, err := nftables.NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	fake := knftables.NewFake(family(opts), nftables.TableName)
	s := &nftables.Syncer{NFT: fake, Renderer: r}
	if clock != nil {
		s.Now = clock.now
	}
	return s, fake
}

func mustSync(t *testing.T, s *nftables.Syncer, snap *model.Snapshot) nftables.Result {
	t.Helper()
	res, err := s.Sync(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type svcOpt func(*corev1.Service)

func service(ns, name, clusterIP string, ports []corev1.ServicePort, opts ...svcOpt) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP}, Ports: ports},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func tcpPort(name string, port, nodePort int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: port, NodePort: nodePort}
}

func nodePortType(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }

func etpLocal(s *corev1.Service) {
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
}

func loadBalancer(vip string, sourceRanges ...string) svcOpt {
	return func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.LoadBalancerSourceRanges = sourceRanges
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip}}
	}
}

func externalIPs(ips ...string) svcOpt { return func(s *corev1.Service) { s.Spec.ExternalIPs = ips } }

func clientIPAffinity(seconds int32) svcOpt {
	return func(s *corev1.Service) {
		s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To(seconds)}}
	}
}

func ipv6(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} }

type endpoint struct {
	ip, node string
	ready    bool
}

func slice(ns, svc, port string, portNum int32, addrType discoveryv1.AddressType, eps ...endpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: svc + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: addrType,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(portNum)}},
	}
	for _, e := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{e.ip}, NodeName: ptr.To(e.node),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(e.ready)},
		})
	}
	return s
}

func ready(ip, node string) endpoint { return endpoint{ip, node, true} }

// lines counts the lines of s that start with prefix.
func lines(s, prefix string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}
