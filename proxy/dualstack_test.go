package proxy

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/model"
	"github.com/svclab/svclab/proxy/nftables"
	"github.com/svclab/svclab/proxy/sources"
)

// dualStackObjects are a dual-stack Service (one ClusterIP per family)
// and one EndpointSlice per address type, each with an endpoint on node
// "n1".
func dualStackObjects() *sources.Objects {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.11", ClusterIPs: []string{"10.96.0.11", "fd00:10:96::b"},
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	slice := func(name string, at discoveryv1.AddressType, ip string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
			AddressType: at,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip}, NodeName: ptr.To("n1"),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)}}},
			Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080)), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
	}
	return &sources.Objects{Services: []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{
		slice("web-v4", discoveryv1.AddressTypeIPv4, "10.244.1.5"),
		slice("web-v6", discoveryv1.AddressTypeIPv6, "fd00:10:244:1::5"),
	}}
}

// staticSource lists the same objects every time.
type staticSource struct{ objs *sources.Objects }

func (s staticSource) Run(context.Context, func()) error { return nil }
func (s staticSource) List() (*sources.Objects, error)   { return s.objs, nil }

// TestLoopSyncsEveryFamily: a dual-stack loop gives each family's backend
// the snapshot of its own family (the Service's ClusterIP and the
// endpoint of that family), reports each family's outcome and their sum.
func TestLoopSyncsEveryFamily(t *testing.T) {
	v4, v6 := &fakeBackend{}, &fakeBackend{}
	ch := startLoop(t, &Loop{Source: staticSource{dualStackObjects()}, Backend: v4, NodeName: "n1", SyncPeriod: time.Hour,
		Secondary: &FamilyBackend{Family: corev1.IPv6Protocol, Backend: v6}})
	o := next(t, ch)
	if o.Err != nil || len(o.Families) != 2 || o.Stats.ServicePorts != 2 {
		t.Fatalf("outcome: %+v", o)
	}
	if o.Families[0].Family != corev1.IPv4Protocol || o.Families[1].Family != corev1.IPv6Protocol {
		t.Errorf("families reported: %s, %s; want IPv4, IPv6", o.Families[0].Family, o.Families[1].Family)
	}
	for _, tt := range []struct {
		be        *fakeBackend
		family    corev1.IPFamily
		clusterIP string
		endpoint  string
	}{
		{v4, corev1.IPv4Protocol, "10.96.0.11", "10.244.1.5"},
		{v6, corev1.IPv6Protocol, "fd00:10:96::b", "fd00:10:244:1::5"},
	} {
		snap := tt.be.snapshots[0]
		if snap.Family != tt.family || len(snap.ServicePorts) != 1 {
			t.Fatalf("%s backend got a %s snapshot of %d service ports", tt.family, snap.Family, len(snap.ServicePorts))
		}
		sp := snap.ServicePorts[0]
		if sp.ClusterIP.String() != tt.clusterIP || len(sp.Endpoints) != 1 || sp.Endpoints[0].IP.String() != tt.endpoint || !sp.Endpoints[0].IsLocal {
			t.Errorf("%s snapshot: ClusterIP %s, endpoints %+v; want %s with local endpoint %s", tt.family, sp.ClusterIP, sp.Endpoints, tt.clusterIP, tt.endpoint)
		}
	}
}

// TestLoopSingleStackSyncsIPv4Only: a loop without Secondary is today's
// IPv4 loop: one family, the IPv4 snapshot.
func TestLoopSingleStackSyncsIPv4Only(t *testing.T) {
	be := &fakeBackend{}
	o := next(t, startLoop(t, &Loop{Source: staticSource{dualStackObjects()}, Backend: be, NodeName: "n1", SyncPeriod: time.Hour}))
	if o.Err != nil || len(o.Families) != 1 || o.Families[0].Family != corev1.IPv4Protocol || be.snapshots[0].Family != corev1.IPv4Protocol {
		t.Fatalf("outcome %+v, snapshot family %s", o, be.snapshots[0].Family)
	}
}

// TestLoopFamilyFailureDoesNotStopTheOther: the families sync on their
// own, as upstream's proxiers; the outcome carries the failing one's error.
func TestLoopFamilyFailureDoesNotStopTheOther(t *testing.T) {
	v4, v6 := &fakeBackend{failNext: 1}, &fakeBackend{}
	o := next(t, startLoop(t, &Loop{Source: staticSource{dualStackObjects()}, Backend: v4, NodeName: "n1", SyncPeriod: time.Hour, RetryPeriod: time.Hour,
		Secondary: &FamilyBackend{Family: corev1.IPv6Protocol, Backend: v6}}))
	if o.Err == nil || o.Families[0].Err == nil || o.Families[1].Err != nil || v6.syncs != 1 {
		t.Fatalf("outcome %+v, IPv6 syncs %d; want the IPv4 error and one IPv6 sync", o, v6.syncs)
	}
}

// syncNFTables syncs snap through a nftables backend of family over a fake
// kernel and returns the fake's dump.
func syncNFTables(t *testing.T, clusterCIDR string, family corev1.IPFamily, objs *sources.Objects) string {
	t.Helper()
	fake := knftables.NewFake(nftablesFamily(family), nftables.TableName)
	cfg, err := config.Parse("config.conf", []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nclusterCIDR: "+clusterCIDR+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := startNFTablesBackend(cfg, family, nodePortSelection{}, fake, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Sync(model.BuildFamily(family, objs.Services, objs.EndpointSlices, "n1")); err != nil {
		t.Fatal(err)
	}
	return fake.Dump()
}

// TestNFTablesBackendPerFamily: on a dual-stack node the IPv6 backend
// writes table ip6 kube-proxy with the Service's IPv6 ClusterIP, endpoint
// and local detection by the IPv6 cluster CIDR, and the IPv4 backend
// writes exactly what an IPv4 node's writes.
func TestNFTablesBackendPerFamily(t *testing.T) {
	objs := dualStackObjects()
	ipv6 := syncNFTables(t, "10.244.0.0/16,fd00:10:244::/56", corev1.IPv6Protocol, objs)
	for _, want := range []string{"add table ip6 kube-proxy", "add element ip6 kube-proxy cluster-ips { fd00:10:96::b }", "to numgen random mod 1 map { 0 : fd00:10:244:1::5 . 8080 }", "ip6 saddr != fd00:10:244::/56"} {
		if !strings.Contains(ipv6, want) {
			t.Errorf("IPv6 table lacks %q:\n%s", want, ipv6)
		}
	}
	for _, unwanted := range []string{"10.96.0.11", "10.244."} {
		if strings.Contains(ipv6, unwanted) {
			t.Errorf("IPv6 table holds the IPv4 %q", unwanted)
		}
	}
	dualIPv4 := syncNFTables(t, "10.244.0.0/16,fd00:10:244::/56", corev1.IPv4Protocol, objs)
	ipv4Node := syncNFTables(t, "10.244.0.0/16", corev1.IPv4Protocol, objs)
	if dualIPv4 != ipv4Node {
		t.Errorf("a dual-stack node's IPv4 table differs from an IPv4 node's:\n%s\n---\n%s", dualIPv4, ipv4Node)
	}
	if !strings.Contains(ipv4Node, "add table ip kube-proxy") || strings.Contains(ipv4Node, "fd00:") {
		t.Errorf("IPv4 table:\n%s", ipv4Node)
	}
}
