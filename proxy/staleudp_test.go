package proxy

import (
	"net"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/model"
)

// staleSnapshot: a UDP Service dns with two ports (53 to 10.244.1.5
// serving and 10.244.1.6 terminating and no longer serving; 54 to
// 10.244.1.7), reachable by ClusterIP, an external IP, a load balancer VIP
// and node port 30053; and a TCP Service web.
func staleSnapshot() *model.Snapshot {
	ip := netip.MustParseAddr
	dns := func(port string, p, nodePort int32, eps ...model.Endpoint) *model.ServicePort {
		return &model.ServicePort{
			Name: model.ServicePortName{Namespace: "default", Name: "dns", Port: port, Protocol: corev1.ProtocolUDP}, Protocol: corev1.ProtocolUDP,
			ClusterIP: ip("10.96.0.20"), Port: p, NodePort: nodePort,
			ExternalIPs: []netip.Addr{ip("192.168.1.100")}, LoadBalancerVIPs: []netip.Addr{ip("172.18.255.200")},
			Endpoints: eps,
		}
	}
	return &model.Snapshot{Family: corev1.IPv4Protocol, ServicePorts: []*model.ServicePort{
		dns("a", 53, 30053,
			model.Endpoint{IP: ip("10.244.1.5"), Port: 5353, Ready: true, Serving: true},
			model.Endpoint{IP: ip("10.244.1.6"), Port: 5353, Terminating: true}),
		dns("b", 54, 0, model.Endpoint{IP: ip("10.244.1.7"), Port: 5454, Ready: true, Serving: true}),
		{Name: model.ServicePortName{Namespace: "default", Name: "web", Protocol: corev1.ProtocolTCP}, Protocol: corev1.ProtocolTCP,
			ClusterIP: ip("10.96.0.21"), Port: 80},
	}}
}

func TestStaleUDPFlows(t *testing.T) {
	f := newStaleUDPFilter(staleSnapshot())
	tests := []struct {
		name      string
		proto     uint8
		origDst   string
		replySrc  string
		wantStale bool
	}{
		{"to a serving endpoint", unix.IPPROTO_UDP, "10.96.0.20:53", "10.244.1.5", false},
		{"to an endpoint no longer serving", unix.IPPROTO_UDP, "10.96.0.20:53", "10.244.1.6", true},
		{"to an endpoint that is gone", unix.IPPROTO_UDP, "10.96.0.20:53", "10.244.1.9", true},
		{"never translated (no endpoint when it began)", unix.IPPROTO_UDP, "10.96.0.20:53", "10.96.0.20", true},
		{"second port to its own endpoint", unix.IPPROTO_UDP, "10.96.0.20:54", "10.244.1.7", false},
		{"second port to the first port's endpoint", unix.IPPROTO_UDP, "10.96.0.20:54", "10.244.1.5", true},
		{"external IP to a serving endpoint", unix.IPPROTO_UDP, "192.168.1.100:53", "10.244.1.5", false},
		{"external IP to a gone endpoint", unix.IPPROTO_UDP, "192.168.1.100:53", "10.244.1.9", true},
		{"load balancer VIP to a gone endpoint", unix.IPPROTO_UDP, "172.18.255.200:53", "10.244.1.9", true},
		{"node port to a serving endpoint", unix.IPPROTO_UDP, "192.168.16.73:30053", "10.244.1.5", false},
		{"node port to a gone endpoint", unix.IPPROTO_UDP, "192.168.16.73:30053", "10.244.1.9", true},
		{"TCP is left alone", unix.IPPROTO_TCP, "10.96.0.21:80", "10.244.2.9", false},
		{"TCP to a UDP Service's address is left alone", unix.IPPROTO_TCP, "10.96.0.20:53", "10.244.1.9", false},
		{"UDP to no Service", unix.IPPROTO_UDP, "8.8.8.8:53", "8.8.8.8", false},
		{"UDP to a Service IP on another port", unix.IPPROTO_UDP, "10.96.0.20:55", "10.96.0.20", false},
	}
	for _, tt := range tests {
		got := f.stale(tt.proto, netip.MustParseAddrPort(tt.origDst), netip.MustParseAddr(tt.replySrc))
		if got != tt.wantStale {
			t.Errorf("%s: proto %d to %s, replies from %s: stale %v, want %v", tt.name, tt.proto, tt.origDst, tt.replySrc, got, tt.wantStale)
		}
		// The netlink filter decides the same for the entry as the kernel
		// reports it (16-byte IPv4 addresses).
		dst := netip.MustParseAddrPort(tt.origDst)
		flow := &netlink.ConntrackFlow{FamilyType: unix.AF_INET,
			Forward: netlink.IPTuple{Protocol: tt.proto, SrcIP: net.ParseIP("10.244.1.4"), SrcPort: 12345, DstIP: net.ParseIP(dst.Addr().String()), DstPort: dst.Port()},
			Reverse: netlink.IPTuple{Protocol: tt.proto, SrcIP: net.ParseIP(tt.replySrc), DstIP: net.ParseIP("10.244.1.4"), DstPort: 12345},
		}
		if got := f.MatchConntrackFlow(flow); got != tt.wantStale {
			t.Errorf("%s: MatchConntrackFlow = %v, want %v", tt.name, got, tt.wantStale)
		}
	}
}

func TestStaleUDPFilterEmptyWithoutUDP(t *testing.T) {
	snap := staleSnapshot()
	snap.ServicePorts = snap.ServicePorts[2:] // web, TCP only
	if f := newStaleUDPFilter(snap); !f.empty() {
		t.Errorf("a snapshot without UDP service ports: filter %+v, want empty (the table is then not read)", f)
	}
	if n, err := CleanStaleUDPFlows(snap); n != 0 || err != nil {
		t.Errorf("CleanStaleUDPFlows without UDP = %d, %v; want 0, nil without reading the table", n, err)
	}
}

// TestStaleUDPFlowsIPv6: an IPv6 snapshot's filter judges IPv6 flows by
// their IPv6 service address and endpoints, and is run on the AF_INET6
// conntrack entries (each family's proxier cleans its own family's).
func TestStaleUDPFlowsIPv6(t *testing.T) {
	ip := netip.MustParseAddr
	snap := &model.Snapshot{Family: corev1.IPv6Protocol, ServicePorts: []*model.ServicePort{{
		Name:     model.ServicePortName{Namespace: "kube-system", Name: "kube-dns", Port: "dns", Protocol: corev1.ProtocolUDP},
		Protocol: corev1.ProtocolUDP, ClusterIP: ip("fd00:10:96::a"), Port: 53,
		Endpoints: []model.Endpoint{{IP: ip("fd00:10:244:1::5"), Port: 53, Ready: true, Serving: true}},
	}}}
	f := newStaleUDPFilter(snap)
	flow := func(dst, replySrc string) *netlink.ConntrackFlow {
		fl := &netlink.ConntrackFlow{FamilyType: unix.AF_INET6}
		fl.Forward.Protocol, fl.Forward.DstIP, fl.Forward.DstPort = unix.IPPROTO_UDP, net.ParseIP(dst), 53
		fl.Reverse.SrcIP = net.ParseIP(replySrc)
		return fl
	}
	if !f.MatchConntrackFlow(flow("fd00:10:96::a", "fd00:10:244:1::9")) {
		t.Error("a flow to the IPv6 ClusterIP answered by a gone endpoint is not stale")
	}
	if f.MatchConntrackFlow(flow("fd00:10:96::a", "fd00:10:244:1::5")) {
		t.Error("a flow answered by the serving IPv6 endpoint is stale")
	}
	if conntrackFamily(corev1.IPv6Protocol) != unix.AF_INET6 || conntrackFamily(corev1.IPv4Protocol) != unix.AF_INET || conntrackFamily("") != unix.AF_INET {
		t.Error("conntrack families: IPv6 must read AF_INET6, IPv4 and the zero family AF_INET")
	}
}
