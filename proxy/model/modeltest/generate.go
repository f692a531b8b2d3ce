package modeltest

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/svclab/svclab/proxy/model"
)

// NodeName is the node the generated endpoints call local; OtherNode is
// the one they call remote.
const (
	NodeName  = "node-a"
	OtherNode = "node-b"
)

// NodeIP is the node's address; generated external IPs and load balancer
// source ranges sometimes contain it.
const NodeIP = "192.168.0.10"

// ClusterCIDR is the pod network the generated endpoints live in.
const ClusterCIDR = "10.244.0.0/16"

// Limits keep one input small: a fuzz input is about the shapes of
// objects, not their number.
const (
	MaxServices          = 6
	MaxPortsPerService   = 3
	MaxSlicesPerService  = 2
	MaxEndpointsPerSlice = 5
)

// Generate reads data as a sequence of choices and returns the Services and
// EndpointSlices they describe; a short input ends in zero choices, so
// every input gives a result and the same input the same result.
//
// The objects are what the API server would store: names, namespaces and
// port names pass its validation, a Service's port names are unique (and
// set when it has several ports), no two ports share a number and protocol,
// Service names and cluster IPs are unique. Everything the
// proxy must cope with on a real cluster varies: every Service type and
// IP family form (clusterIP "None", IPv6, dual-stack lists, IPv4 with
// leading zeros), protocols, node and health check node ports, external
// IPs, load balancer ingress with either IP mode and source ranges
// (padded, zero-length, of the other family), both traffic policies,
// session affinity, and slices that belong to no Service, repeat an
// endpoint, carry ports without names or numbers, addresses of the other
// family, every ready/serving/terminating combination, local and remote
// nodes, and valid, negative and malformed weight annotations.
func Generate(data []byte) ([]*corev1.Service, []*discoveryv1.EndpointSlice) {
	g := &gen{data: data}
	var services []*corev1.Service
	var slices []*discoveryv1.EndpointSlice
	n := 1 + g.intn(MaxServices)
	taken := map[string]bool{}
	for i := 0; i < n; i++ {
		svc := g.service(i)
		// Names are unique in a namespace: a name already taken gets the
		// service's index in place of its last characters.
		if key := svc.Namespace + "/" + svc.Name; taken[key] {
			svc.Name = svc.Name[:min(len(svc.Name), 60)] + strconv.Itoa(i)
		}
		taken[svc.Namespace+"/"+svc.Name] = true
		services = append(services, svc)
		for j := g.intn(MaxSlicesPerService + 1); j > 0; j-- {
			slices = append(slices, g.slice(svc, services, j))
		}
	}
	return services, slices
}

type gen struct{ data []byte }

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *gen) intn(n int) int { return int(g.byte()) % n }
func (g *gen) bool() bool     { return g.byte()&1 == 1 }

func pick[T any](g *gen, choices ...T) T { return choices[g.intn(len(choices))] }

// u16 is a number from two choices.
func (g *gen) u16() int { return int(g.byte())<<8 | int(g.byte()) }

var (
	namespaces = []string{"default", "kube-system", "a", "ns-0123456789-0123456789-0123456789-0123456789-0123456789-01234"}
	names      = []string{"web", "dns", "b", "svc-0123456789-0123456789-0123456789-0123456789-0123456789-0123"}
	portNames  = []string{"http", "dns-tcp", "p", "a-b", "abcdefghijklmno", "grpc-8"}
)

// service makes the i-th Service: its metadata and type, then, in this
// order (the input's bytes are read in it), its cluster IPs, ports,
// external IPs and traffic policies, session affinity, and a LoadBalancer's
// status and fields.
func (g *gen) service(i int) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: pick(g, namespaces...), Name: pick(g, names...)},
	}
	svc.Spec.Type = pick(g, corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName, "")
	g.clusterIPs(svc, i)
	external := svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	g.ports(svc, external)
	g.externalIPsAndPolicies(svc, external)
	g.sessionAffinity(svc)
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		g.loadBalancer(svc)
	}
	return svc
}

// clusterIPs: unique, the i-th service gets .i+1 of its family; single-
// or dual-stack, headless, zero-padded (invalid) or none.
func (g *gen) clusterIPs(svc *corev1.Service, i int) {
	v4 := fmt.Sprintf("10.96.0.%d", i+1)
	v6 := fmt.Sprintf("fd00:96::%x", i+1)
	switch g.intn(7) {
	case 0:
		svc.Spec.ClusterIP = v4
	case 1:
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = v4, []string{v4}
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	case 2:
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = v6, []string{v6, v4}
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
	case 3:
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = v6, []string{v6}
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	case 4:
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	case 5:
		svc.Spec.ClusterIP = fmt.Sprintf("010.096.000.%03d", i+1)
	case 6:
		svc.Spec.ClusterIP = ""
	}
}

// ports: up to MaxPortsPerService, never two with one number and
// protocol, named when there are several; node ports on most ports of an
// external Service.
func (g *gen) ports(svc *corev1.Service, external bool) {
	nports := g.intn(MaxPortsPerService + 1)
	first := g.intn(len(portNames))
	for k := 0; k < nports; k++ {
		p := corev1.ServicePort{
			Protocol: pick(g, corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP, ""),
			Port:     int32(pick(g, 80, 53, 443, 1, 65535, 1+g.u16()%65535)),
		}
		if clash(svc.Spec.Ports, p) {
			// The API server refuses two ports with one number and protocol.
			continue
		}
		if nports > 1 || g.bool() {
			p.Name = portNames[(first+k)%len(portNames)]
		}
		p.TargetPort = pick(g, intstr.FromInt32(p.Port), intstr.FromInt32(8080), intstr.FromString("http"))
		if external && g.intn(4) != 0 {
			p.NodePort = int32(30000 + g.u16()%2768)
		}
		svc.Spec.Ports = append(svc.Spec.Ports, p)
	}
}

// externalIPsAndPolicies: up to two external IPs (some invalid), an
// external traffic policy when the Service is reachable from outside,
// sometimes an internal one.
func (g *gen) externalIPsAndPolicies(svc *corev1.Service, external bool) {
	for k := g.intn(3); k > 0; k-- {
		svc.Spec.ExternalIPs = append(svc.Spec.ExternalIPs, pick(g, "203.0.113.5", NodeIP, "fd00::5", "203.000.113.006", fmt.Sprintf("203.0.113.%d", g.byte())))
	}
	if external || len(svc.Spec.ExternalIPs) > 0 {
		svc.Spec.ExternalTrafficPolicy = pick(g, corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal, "")
	}
	if g.bool() {
		itp := pick(g, corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
		svc.Spec.InternalTrafficPolicy = &itp
	}
}

// sessionAffinity: None, ClientIP (sometimes with a timeout) or unset.
func (g *gen) sessionAffinity(svc *corev1.Service) {
	svc.Spec.SessionAffinity = pick(g, corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP, "")
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP && g.bool() {
		timeout := int32(1 + g.u16()%86400)
		svc.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
	}
}

// loadBalancer: up to two ingress points (an IP, with or without an IP
// mode, or a hostname), source ranges (some IPv6, some padded), and a
// healthCheckNodePort with externalTrafficPolicy Local.
func (g *gen) loadBalancer(svc *corev1.Service) {
	for k := g.intn(3); k > 0; k-- {
		ing := corev1.LoadBalancerIngress{IP: pick(g, "198.51.100.1", fmt.Sprintf("198.51.100.%d", g.byte()), "fd00:51::1", "")}
		if ing.IP == "" {
			ing.Hostname = "lb.example.com"
		}
		switch g.intn(3) {
		case 1:
			mode := corev1.LoadBalancerIPModeVIP
			ing.IPMode = &mode
		case 2:
			mode := corev1.LoadBalancerIPModeProxy
			ing.IPMode = &mode
		}
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, ing)
	}
	for k := g.intn(3); k > 0; k-- {
		svc.Spec.LoadBalancerSourceRanges = append(svc.Spec.LoadBalancerSourceRanges,
			pick(g, "192.168.0.0/24", "203.0.113.0/24", " 10.0.0.0/8 ", "0.0.0.0/0", "fd00::/64", NodeIP+"/32"))
	}
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && g.bool() {
		svc.Spec.HealthCheckNodePort = int32(30000 + g.u16()%2768)
	}
}

// slice makes the j-th EndpointSlice of svc, or, sometimes, of another
// Service or of none.
func (g *gen) slice(svc *corev1.Service, services []*corev1.Service, j int) *discoveryv1.EndpointSlice {
	owner := svc
	if g.intn(8) == 0 {
		owner = pick(g, services...)
	}
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: owner.Namespace,
			Name:      owner.Name + "-" + strconv.Itoa(j),
			Labels:    map[string]string{discoveryv1.LabelServiceName: owner.Name},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	switch g.intn(10) {
	case 0:
		delete(s.Labels, discoveryv1.LabelServiceName)
	case 1:
		s.AddressType = discoveryv1.AddressTypeIPv6
	case 2:
		s.AddressType = discoveryv1.AddressTypeFQDN
	}
	for _, sp := range owner.Spec.Ports {
		name, proto := sp.Name, sp.Protocol
		var p discoveryv1.EndpointPort
		switch g.intn(8) {
		case 0: // no name
		case 1:
			p.Name = &name
			p.Protocol = pick(g, &proto, nil)
		default:
			p.Name = &name
			if proto != "" {
				p.Protocol = &proto
			}
			port := int32(pick(g, 8080, int(sp.Port), 0, 1+g.u16()%65535))
			p.Port = &port
		}
		s.Ports = append(s.Ports, p)
	}
	weights := map[string]int32{}
	for k := g.intn(MaxEndpointsPerSlice + 1); k > 0; k-- {
		ip := pick(g, fmt.Sprintf("10.244.%d.%d", g.intn(2), 2+g.intn(6)), "fd00:244::2", "010.244.000.007", "10.244.1.2")
		e := discoveryv1.Endpoint{Addresses: []string{ip}}
		if g.intn(6) == 0 {
			e.Addresses = append(e.Addresses, "10.244.3.3")
		}
		e.Conditions.Ready = g.cond()
		e.Conditions.Serving = g.cond()
		e.Conditions.Terminating = g.cond()
		if node := pick(g, "", NodeName, OtherNode); node != "" {
			e.NodeName = &node
		}
		if g.intn(4) == 0 {
			weights[ip] = int32(pick(g, 1, 3, 100, -1, 0))
		}
		s.Endpoints = append(s.Endpoints, e)
	}
	switch g.intn(6) {
	case 0:
		if b, err := json.Marshal(weights); err == nil {
			s.Annotations = map[string]string{model.WeightsAnnotation: string(b)}
		}
	case 1:
		s.Annotations = map[string]string{model.WeightsAnnotation: "{not json"}
	}
	return s
}

func clash(ports []corev1.ServicePort, p corev1.ServicePort) bool {
	tcp := func(p corev1.Protocol) corev1.Protocol {
		if p == "" {
			return corev1.ProtocolTCP
		}
		return p
	}
	for _, o := range ports {
		if o.Port == p.Port && tcp(o.Protocol) == tcp(p.Protocol) {
			return true
		}
	}
	return false
}

// cond is an EndpointSlice condition: unset, true or false.
func (g *gen) cond() *bool {
	switch g.intn(3) {
	case 1:
		t := true
		return &t
	case 2:
		f := false
		return &f
	}
	return nil
}
