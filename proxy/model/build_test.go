package model

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/svclab/svclab/internal/fixtures"
)

func names(snap *Snapshot) []string {
	out := []string{}
	for _, sp := range snap.ServicePorts {
		out = append(out, sp.Name.String()+"/"+string(sp.Protocol))
	}
	return out
}

func TestBuildSkipsServicesUpstreamDoesNotProxy(t *testing.T) {
	headless := fixtures.Service("default", "headless", corev1.ClusterIPNone, []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	noIP := fixtures.Service("default", "pending", "", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	external := fixtures.Service("default", "external", "10.96.0.9", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	external.Spec.Type = corev1.ServiceTypeExternalName
	ipv6Only := fixtures.Service("default", "v6", "fd00::10", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	ipv6Only.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	ipv6Only.Spec.ClusterIPs = []string{"fd00::10"}
	normal := fixtures.Service("default", "web", "10.96.0.10", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})

	snap := Build([]*corev1.Service{headless, noIP, external, ipv6Only, normal, nil}, nil, "node-a")
	if got, want := names(snap), []string{"default/web:http/TCP"}; !slices.Equal(got, want) {
		t.Fatalf("service ports = %v, want %v", got, want)
	}

	v6 := BuildFamily(corev1.IPv6Protocol, []*corev1.Service{ipv6Only, normal}, nil, "node-a")
	if got, want := names(v6), []string{"default/v6:http/TCP"}; !slices.Equal(got, want) {
		t.Fatalf("IPv6 service ports = %v, want %v", got, want)
	}
	if v6.ServicePorts[0].ClusterIP != addr("fd00::10") {
		t.Errorf("IPv6 cluster IP = %v", v6.ServicePorts[0].ClusterIP)
	}
}

func TestBuildPicksClusterIPOfFamilyFromDualStackService(t *testing.T) {
	svc := fixtures.Service("default", "dual", "fd00::20", []corev1.ServicePort{fixtures.TCPServicePort("", 80)})
	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
	svc.Spec.ClusterIPs = []string{"fd00::20", "10.96.0.20"}
	snap := Build([]*corev1.Service{svc}, nil, "")
	if len(snap.ServicePorts) != 1 || snap.ServicePorts[0].ClusterIP != addr("10.96.0.20") {
		t.Fatalf("want one port on 10.96.0.20, got %+v", snap.ServicePorts)
	}
}

func TestBuildSortsServicePortsAndKeepsEachPort(t *testing.T) {
	httpserver := fixtures.Service("default", "httpserver", "10.96.0.30", []corev1.ServicePort{fixtures.TCPServicePort("web", 3000), fixtures.TCPServicePort("alt", 8080)})
	dns := fixtures.Service("kube-system", "kube-dns", "10.96.0.10", []corev1.ServicePort{
		fixtures.ServicePort("dns", corev1.ProtocolUDP, 53, 0), fixtures.TCPServicePort("dns-tcp", 53)})
	api := fixtures.Service("default", "kubernetes", "10.96.0.1", []corev1.ServicePort{fixtures.TCPServicePort("https", 443)})

	snap := Build([]*corev1.Service{dns, httpserver, api}, nil, "")
	want := []string{
		"default/httpserver:alt/TCP",
		"default/httpserver:web/TCP",
		"default/kubernetes:https/TCP",
		"kube-system/kube-dns:dns/UDP",
		"kube-system/kube-dns:dns-tcp/TCP",
	}
	if got := names(snap); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	if sp := snap.Lookup(ServicePortName{"default", "httpserver", "alt", corev1.ProtocolTCP}); sp == nil || sp.Port != 8080 {
		t.Errorf("Lookup(httpserver:alt) = %+v, want port 8080", sp)
	}
	if sp := snap.Lookup(ServicePortName{"default", "missing", "", corev1.ProtocolTCP}); sp != nil {
		t.Errorf("Lookup(missing) = %+v, want nil", sp)
	}
}

func TestBuildCopiesServicePortFields(t *testing.T) {
	svc := fixtures.Service("shop", "front", "10.96.0.40", []corev1.ServicePort{{
		Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, NodePort: 30080, TargetPort: intstr.FromString("web"),
	}})
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
	svc.Spec.HealthCheckNodePort = 32000
	svc.Spec.ExternalIPs = []string{"192.168.1.5", "fd00::5", "bogus"}
	svc.Spec.LoadBalancerSourceRanges = []string{" 203.0.113.0/25 ", "2001:db8::/64"}
	svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
		{IP: "1.2.3.4"},
		{IP: "5.6.7.8", IPMode: ptr.To(corev1.LoadBalancerIPModeProxy)},
		{Hostname: "lb.example"},
	}

	sp := Build([]*corev1.Service{svc}, nil, "").ServicePorts[0]
	want := &ServicePort{
		Name:                     ServicePortName{"shop", "front", "http", corev1.ProtocolTCP},
		Type:                     corev1.ServiceTypeLoadBalancer,
		ClusterIP:                addr("10.96.0.40"),
		Port:                     80,
		Protocol:                 corev1.ProtocolTCP,
		NodePort:                 30080,
		TargetPort:               intstr.FromString("web"),
		ExternalIPs:              []netip.Addr{addr("192.168.1.5")},
		LoadBalancerVIPs:         []netip.Addr{addr("1.2.3.4")},
		LoadBalancerSourceRanges: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/25")},
		HealthCheckNodePort:      32000,
		ExternalPolicyLocal:      true,
		InternalPolicyLocal:      true,
		SessionAffinity:          corev1.ServiceAffinityClientIP,
		StickyMaxAgeSeconds:      10800, // API default when no config is given
	}
	if !sp.Equal(want) {
		t.Fatalf("got  %+v\nwant %+v", sp, want)
	}
}

func TestBuildExternalPolicyLocalNeedsExternalAccess(t *testing.T) {
	clusterOnly := fixtures.Service("default", "a", "10.96.0.50", []corev1.ServicePort{fixtures.TCPServicePort("", 80)})
	clusterOnly.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	withExternalIP := fixtures.Service("default", "b", "10.96.0.51", []corev1.ServicePort{fixtures.TCPServicePort("", 80)})
	withExternalIP.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	withExternalIP.Spec.ExternalIPs = []string{"192.168.1.9"}

	snap := Build([]*corev1.Service{clusterOnly, withExternalIP}, nil, "")
	if snap.ServicePorts[0].ExternalPolicyLocal {
		t.Error("ClusterIP service without external IPs must not be ExternalPolicyLocal")
	}
	if !snap.ServicePorts[1].ExternalPolicyLocal {
		t.Error("ClusterIP service with external IPs and ETP=Local must be ExternalPolicyLocal")
	}
}

func TestBuildSourceRangeAllowAllMeansNoRanges(t *testing.T) {
	svc := fixtures.Service("default", "lb", "10.96.0.60", []corev1.ServicePort{fixtures.TCPServicePort("", 80)})
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	svc.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8", "0.0.0.0/0"}
	if got := Build([]*corev1.Service{svc}, nil, "").ServicePorts[0].LoadBalancerSourceRanges; len(got) != 0 {
		t.Errorf("source ranges = %v, want none (0.0.0.0/0 allows all)", got)
	}
}

func TestBuildMatchesSlicePortsByNameAndProtocol(t *testing.T) {
	svc := fixtures.Service("default", "httpserver", "10.96.0.30", []corev1.ServicePort{fixtures.TCPServicePort("web", 3000), fixtures.TCPServicePort("alt", 8080)})
	s := fixtures.NamedEndpointSlice("default", "httpserver", "httpserver-abc",
		[]discoveryv1.EndpointPort{
			fixtures.TCPEndpointPort("web", 3000),
			fixtures.TCPEndpointPort("alt", 8081),
			{Name: ptr.To("web"), Port: ptr.To[int32](9999), Protocol: ptr.To(corev1.ProtocolUDP)}, // other protocol
			{Name: nil, Port: ptr.To[int32](1)},                                                    // nil name: ignored
			{Name: ptr.To("alt"), Port: ptr.To[int32](0)},                                          // zero port: ignored
		},
		fixtures.Endpoint("10.244.1.5", ""), fixtures.Endpoint("10.244.2.6", ""))
	snap := Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{s}, "")
	alt := snap.Lookup(ServicePortName{"default", "httpserver", "alt", corev1.ProtocolTCP})
	web := snap.Lookup(ServicePortName{"default", "httpserver", "web", corev1.ProtocolTCP})
	if got, want := endpointStrings(alt.Endpoints), []string{"10.244.1.5:8081", "10.244.2.6:8081"}; !slices.Equal(got, want) {
		t.Errorf("alt endpoints = %v, want %v", got, want)
	}
	if got, want := endpointStrings(web.Endpoints), []string{"10.244.1.5:3000", "10.244.2.6:3000"}; !slices.Equal(got, want) {
		t.Errorf("web endpoints = %v, want %v", got, want)
	}
}

func TestBuildUnnamedPortMatchesEmptyNamedSlicePort(t *testing.T) {
	svc := fixtures.Service("default", "nginx", "10.96.0.70", []corev1.ServicePort{fixtures.TCPServicePort("", 80)})
	s := fixtures.NamedEndpointSlice("default", "nginx", "nginx-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("", 80)}, fixtures.Endpoint("10.244.169.147", ""))
	sp := Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{s}, "").ServicePorts[0]
	if got, want := endpointStrings(sp.Endpoints), []string{"10.244.169.147:80"}; !slices.Equal(got, want) {
		t.Errorf("endpoints = %v, want %v", got, want)
	}
}

func TestBuildIgnoresSlicesNotBelongingToTheService(t *testing.T) {
	svc := fixtures.Service("default", "web", "10.96.0.80", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	unlabelled := fixtures.NamedEndpointSlice("default", "web", "web-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)}, fixtures.Endpoint("10.0.0.1", ""))
	unlabelled.Labels = nil
	otherNS := fixtures.NamedEndpointSlice("other", "web", "web-2", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)}, fixtures.Endpoint("10.0.0.2", ""))
	ipv6 := fixtures.NamedEndpointSlice("default", "web", "web-3", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)}, fixtures.Endpoint("fd00::3", ""))
	ipv6.AddressType = discoveryv1.AddressTypeIPv6
	fqdn := fixtures.NamedEndpointSlice("default", "web", "web-4", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)}, fixtures.Endpoint("10.0.0.4", ""))
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	good := fixtures.NamedEndpointSlice("default", "web", "web-5", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)}, fixtures.Endpoint("10.0.0.5", ""), discoveryv1.Endpoint{})

	sp := Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{unlabelled, otherNS, ipv6, fqdn, good}, "").ServicePorts[0]
	if got, want := endpointStrings(sp.Endpoints), []string{"10.0.0.5:80"}; !slices.Equal(got, want) {
		t.Errorf("endpoints = %v, want %v", got, want)
	}
}

func TestBuildEndpointConditionsAndLocality(t *testing.T) {
	svc := fixtures.Service("default", "web", "10.96.0.90", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	s := fixtures.NamedEndpointSlice("default", "web", "web-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)},
		fixtures.Endpoint("10.0.0.1", ""),
		fixtures.Endpoint("10.0.0.2", "node-a"),
		fixtures.Endpoint("10.0.0.3", "node-b"),
		fixtures.Endpoint("10.0.0.4", "", fixtures.Conditions(false, true, true)),
	)
	sp := Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{s}, "node-a").ServicePorts[0]
	want := []Endpoint{
		{IP: addr("10.0.0.1"), Port: 80, Ready: true, Serving: true},
		{IP: addr("10.0.0.2"), Port: 80, Ready: true, Serving: true, NodeName: "node-a", IsLocal: true},
		{IP: addr("10.0.0.3"), Port: 80, Ready: true, Serving: true, NodeName: "node-b"},
		{IP: addr("10.0.0.4"), Port: 80, Serving: true, Terminating: true},
	}
	if !slices.Equal(sp.Endpoints, want) {
		t.Errorf("endpoints =\n%+v\nwant\n%+v", sp.Endpoints, want)
	}
}

func TestBuildDedupesEndpointsPreferringNonTerminating(t *testing.T) {
	svc := fixtures.Service("default", "web", "10.96.0.91", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	// The same IP:port in two slices: once terminating (old pod), once
	// ready (new pod reusing the IP). Whichever slice comes first, the
	// non-terminating copy wins.
	a := fixtures.NamedEndpointSlice("default", "web", "web-a", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)}, fixtures.Endpoint("10.0.0.7", "", fixtures.Conditions(true, true, false)))
	b := fixtures.NamedEndpointSlice("default", "web", "web-b", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)}, fixtures.Endpoint("10.0.0.7", "", fixtures.Conditions(false, true, true)))
	for _, order := range [][]*discoveryv1.EndpointSlice{{a, b}, {b, a}} {
		sp := Build([]*corev1.Service{svc}, order, "").ServicePorts[0]
		if len(sp.Endpoints) != 1 || sp.Endpoints[0].Terminating || !sp.Endpoints[0].Ready {
			t.Errorf("endpoints = %+v, want the single ready copy", sp.Endpoints)
		}
	}
}

func TestBuildSortsEndpointsByStringLikeUpstream(t *testing.T) {
	svc := fixtures.Service("default", "web", "10.96.0.92", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	s := fixtures.NamedEndpointSlice("default", "web", "web-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)},
		fixtures.Endpoint("10.0.0.2", ""), fixtures.Endpoint("10.0.0.10", ""), fixtures.Endpoint("010.0.0.3", ""))
	sp := Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{s}, "").ServicePorts[0]
	// String order, not numeric: "10.0.0.10:80" < "10.0.0.2:80". The
	// leading-zero address is read the sloppy way, as upstream.
	want := []string{"10.0.0.10:80", "10.0.0.2:80", "10.0.0.3:80"}
	if got := endpointStrings(sp.Endpoints); !slices.Equal(got, want) {
		t.Errorf("endpoints = %v, want %v", got, want)
	}
}

func TestBuildIsDeterministicWhateverTheInputOrder(t *testing.T) {
	svcs := []*corev1.Service{
		fixtures.Service("b", "two", "10.96.1.2", []corev1.ServicePort{fixtures.TCPServicePort("p", 80)}),
		fixtures.Service("a", "one", "10.96.1.1", []corev1.ServicePort{fixtures.TCPServicePort("p", 80)}),
	}
	sls := []*discoveryv1.EndpointSlice{
		fixtures.NamedEndpointSlice("a", "one", "one-2", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("p", 80)}, fixtures.Endpoint("10.0.1.2", "")),
		fixtures.NamedEndpointSlice("a", "one", "one-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("p", 80)}, fixtures.Endpoint("10.0.1.1", "")),
		fixtures.NamedEndpointSlice("b", "two", "two-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("p", 80)}, fixtures.Endpoint("10.0.2.1", "")),
	}
	first := Build(svcs, sls, "")
	slices.Reverse(svcs)
	slices.Reverse(sls)
	second := Build(svcs, sls, "")
	if len(first.ServicePorts) != len(second.ServicePorts) {
		t.Fatal("different lengths")
	}
	for i := range first.ServicePorts {
		if !first.ServicePorts[i].Equal(second.ServicePorts[i]) {
			t.Errorf("port %d differs: %+v vs %+v", i, first.ServicePorts[i], second.ServicePorts[i])
		}
	}
	if first.EndpointCount() != 3 {
		t.Errorf("EndpointCount = %d, want 3", first.EndpointCount())
	}
}

func TestServicePortEqualSeesEndpointChanges(t *testing.T) {
	svc := fixtures.Service("default", "web", "10.96.0.93", []corev1.ServicePort{fixtures.TCPServicePort("http", 80)})
	s := fixtures.NamedEndpointSlice("default", "web", "web-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("http", 80)}, fixtures.Endpoint("10.0.0.1", ""))
	a := Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{s}, "").ServicePorts[0]
	b := Build([]*corev1.Service{svc}, []*discoveryv1.EndpointSlice{s}, "").ServicePorts[0]
	if !a.Equal(b) {
		t.Fatal("identical inputs must give equal service ports")
	}
	b.Endpoints[0].Ready = false
	if a.Equal(b) {
		t.Error("a readiness change must make service ports unequal")
	}
}

func TestEndpointWeightsAnnotation(t *testing.T) {
	for _, tc := range []struct {
		annotation string
		want       int32
	}{{`{"10.0.1.1": 3}`, 3}, {`not json`, 0}, {`{"10.0.1.1": -2}`, 0}, {``, 0}} {
		sl := fixtures.NamedEndpointSlice("ns", "s", "s-1", []discoveryv1.EndpointPort{fixtures.TCPEndpointPort("", 80)}, fixtures.Endpoint("10.0.1.1", ""))
		if tc.annotation != "" {
			sl.Annotations = map[string]string{WeightsAnnotation: tc.annotation}
		}
		snap := Build([]*corev1.Service{fixtures.Service("ns", "s", "10.96.0.1", []corev1.ServicePort{fixtures.TCPServicePort("", 80)})}, []*discoveryv1.EndpointSlice{sl}, "")
		if len(snap.ServicePorts) != 1 || len(snap.ServicePorts[0].Endpoints) != 1 {
			t.Fatalf("snapshot %+v", snap)
		}
		if got := snap.ServicePorts[0].Endpoints[0].Weight; got != tc.want {
			t.Errorf("annotation %q: weight %d, want %d", tc.annotation, got, tc.want)
		}
	}
}

// TestBuildSourceRangesSloppy: ranges the API server stored before strict
// validation (leading zeros) are enforced as kube-proxy enforces them
// (ParseCIDRSloppy), never dropped, which would open the load balancer to
// every source; ranges that do not parse at all are dropped as upstream
// drops them.
func TestBuildSourceRangesSloppy(t *testing.T) {
	svc := fixtures.Service("default", "lb", "10.96.0.60", []corev1.ServicePort{fixtures.TCPServicePort("", 80)})
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	svc.Spec.LoadBalancerSourceRanges = []string{"010.001.0.0/016", "192.168.55.7/24", "1.2.3.4/33", "x/8", "1.2.3.4"}
	got := Build([]*corev1.Service{svc}, nil, "").ServicePorts[0].LoadBalancerSourceRanges
	want := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("192.168.55.0/24")}
	if !slices.Equal(got, want) {
		t.Errorf("source ranges = %v, want %v", got, want)
	}
}
