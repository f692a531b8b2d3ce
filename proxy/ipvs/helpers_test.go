package ipvs

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/iptables/localtraffic"
	"github.com/svclab/svclab/proxy/model"
)

const testNode = "node-a"

var (
	nodeIP     = netip.MustParseAddr("192.168.0.10")
	nodeIP2    = netip.MustParseAddr("10.0.2.15")
	addr       = netip.MustParseAddr
	prefix     = netip.MustParsePrefix
	clusterPod = "10.244.0.0/16"
)

// sp builds a service port; opts adjust it.
func sp(ns, name, port string, proto corev1.Protocol, clusterIP string, portNum int32, opts ...func(*model.ServicePort)) *model.ServicePort {
	s := &model.ServicePort{
		Name:            model.ServicePortName{Namespace: ns, Name: name, Port: port, Protocol: proto},
		Type:            corev1.ServiceTypeClusterIP,
		ClusterIP:       addr(clusterIP),
		Port:            portNum,
		Protocol:        proto,
		SessionAffinity: corev1.ServiceAffinityNone,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func nodePort(n int32) func(*model.ServicePort) {
	return func(s *model.ServicePort) { s.Type, s.NodePort = corev1.ServiceTypeNodePort, n }
}

func etpLocal(s *model.ServicePort) { s.ExternalPolicyLocal = true }

func itpLocal(s *model.ServicePort) { s.InternalPolicyLocal = true }

func clientIP(secs int32) func(*model.ServicePort) {
	return func(s *model.ServicePort) {
		s.SessionAffinity, s.StickyMaxAgeSeconds = corev1.ServiceAffinityClientIP, secs
	}
}

func externalIPs(ips ...string) func(*model.ServicePort) {
	return func(s *model.ServicePort) {
		for _, ip := range ips {
			s.ExternalIPs = append(s.ExternalIPs, addr(ip))
		}
	}
}

func loadBalancer(vip string, hcPort int32, ranges ...string) func(*model.ServicePort) {
	return func(s *model.ServicePort) {
		s.Type = corev1.ServiceTypeLoadBalancer
		s.LoadBalancerVIPs = append(s.LoadBalancerVIPs, addr(vip))
		for _, r := range ranges {
			s.LoadBalancerSourceRanges = append(s.LoadBalancerSourceRanges, prefix(r))
		}
		s.HealthCheckNodePort = hcPort
	}
}

// eps adds endpoints "IP:port" (ready); a "local:" prefix marks the
// endpoint as on testNode, "term:" as serving and terminating.
func eps(list ...string) func(*model.ServicePort) {
	return func(s *model.ServicePort) {
		for _, e := range list {
			ep := model.Endpoint{Ready: true, Serving: true, NodeName: "node-b"}
			for {
				if rest, ok := strings.CutPrefix(e, "local:"); ok {
					e, ep.IsLocal, ep.NodeName = rest, true, testNode
					continue
				}
				if rest, ok := strings.CutPrefix(e, "term:"); ok {
					e, ep.Ready, ep.Terminating = rest, false, true
					continue
				}
				break
			}
			ap := netip.MustParseAddrPort(e)
			ep.IP, ep.Port = ap.Addr(), int32(ap.Port())
			s.Endpoints = append(s.Endpoints, ep)
		}
	}
}

func snapshot(sps ...*model.ServicePort) *model.Snapshot {
	s := &model.Snapshot{NodeName: testNode, Family: corev1.IPv4Protocol, ServicePorts: sps}
	s.SortServicePorts()
	return s
}

// baseSettings is a node with two addresses and a pod range.
func baseSettings() Settings {
	d, err := localtraffic.ByCIDR(clusterPod)
	if err != nil {
		panic(err)
	}
	return Settings{
		NodeAddresses: []netip.Addr{nodeIP2, nodeIP},
		NodeIP:        nodeIP,
		LocalDetector: d,
		MasqueradeBit: 14,
		RandomFully:   true,
	}
}

// kubeDNS is the kube-dns service: UDP and TCP port 53, two endpoints.
func kubeDNS() []*model.ServicePort {
	return []*model.ServicePort{
		sp("kube-system", "kube-dns", "dns", corev1.ProtocolUDP, "10.96.0.10", 53, eps("local:10.244.0.5:53", "10.244.1.7:53")),
		sp("kube-system", "kube-dns", "dns-tcp", corev1.ProtocolTCP, "10.96.0.10", 53, eps("local:10.244.0.5:53", "10.244.1.7:53")),
	}
}
