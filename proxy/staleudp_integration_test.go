package proxy

import (
	"net"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/nsthread"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/model"
)

// TestIntegrationStaleUDPFlowsReadTheTableOnlyWithEntries: on the real
// kernel, in a new network namespace, CleanStaleUDPFlows does not dump the
// conntrack table while the namespace has no entry (nf_conntrack_count 0),
// and once it has two UDP entries to the kube-dns ClusterIP, one answered
// by the serving endpoint and one by a gone one, it dumps the table once
// and deletes the stale entry only.
func TestIntegrationStaleUDPFlowsReadTheTableOnlyWithEntries(t *testing.T) {
	roottest.Require(t, "creates a network namespace and conntrack entries in it")
	ns := roottest.Netns(t, "svclabct")
	h, err := netns.GetFromPath(filepath.Join("/run/netns", ns))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	dumps := 0
	kernel := conntrackDeleteFilters
	conntrackDeleteFilters = func(table netlink.ConntrackTableType, family netlink.InetFamily, filters ...netlink.CustomConntrackFilter) (uint, error) {
		dumps++
		return kernel(table, family, filters...)
	}
	t.Cleanup(func() { conntrackDeleteFilters = kernel })

	ip := netip.MustParseAddr
	snap := &model.Snapshot{Family: corev1.IPv4Protocol, ServicePorts: []*model.ServicePort{{
		Name:     model.ServicePortName{Namespace: "kube-system", Name: "kube-dns", Port: "dns", Protocol: corev1.ProtocolUDP},
		Protocol: corev1.ProtocolUDP, ClusterIP: ip("10.96.0.10"), Port: 53,
		Endpoints: []model.Endpoint{{IP: ip("10.244.1.5"), Port: 53, Ready: true, Serving: true}},
	}}}
	var remaining []string
	err = nsthread.Do(ns, h, func() error {
		if n, err := CleanStaleUDPFlows(snap); n != 0 || err != nil {
			t.Errorf("no entry: CleanStaleUDPFlows = %d, %v; want 0, nil", n, err)
		}
		if dumps != 0 {
			t.Errorf("no entry: the table was dumped %d times, want 0 (nf_conntrack_count is 0)", dumps)
		}
		for i, replySrc := range []string{"10.244.1.5", "10.244.1.9"} {
			if err := netlink.ConntrackCreate(netlink.ConntrackTable, unix.AF_INET, udpFlow(uint16(40000+i), replySrc)); err != nil {
				return err
			}
		}
		n, err := CleanStaleUDPFlows(snap)
		if n != 1 || err != nil {
			t.Errorf("two entries, one stale: CleanStaleUDPFlows = %d, %v; want 1, nil", n, err)
		}
		if dumps != 1 {
			t.Errorf("two entries: the table was dumped %d times, want 1", dumps)
		}
		flows, err := netlink.ConntrackTableList(netlink.ConntrackTable, unix.AF_INET)
		for _, f := range flows {
			remaining = append(remaining, f.Reverse.SrcIP.String())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(remaining) != 1 || remaining[0] != "10.244.1.5" {
		t.Errorf("entries left answered by %v, want only the serving endpoint 10.244.1.5", remaining)
	}
}

// udpFlow is a conntrack entry of a UDP flow from a pod to the kube-dns
// ClusterIP, DNATed to (answered by) replySrc.
func udpFlow(srcPort uint16, replySrc string) *netlink.ConntrackFlow {
	client := net.ParseIP("10.244.1.4").To4()
	return &netlink.ConntrackFlow{
		FamilyType: unix.AF_INET,
		Forward:    netlink.IPTuple{Protocol: unix.IPPROTO_UDP, SrcIP: client, SrcPort: srcPort, DstIP: net.ParseIP("10.96.0.10").To4(), DstPort: 53},
		Reverse:    netlink.IPTuple{Protocol: unix.IPPROTO_UDP, SrcIP: net.ParseIP(replySrc).To4(), SrcPort: 53, DstIP: client, DstPort: srcPort},
		TimeOut:    120,
	}
}
