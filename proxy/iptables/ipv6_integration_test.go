package iptables_test

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/iptables/kernel"
)

// ipv6IntegrationCluster is TestPacketFlowIPv6's kind of cluster: a node
// port service, one with externalTrafficPolicy Local and one without
// endpoints, all IPv6.
func ipv6IntegrationCluster() cluster {
	return cluster{
		services: []*corev1.Service{
			ipv6Service("web", "fd00:10:96::20", 30080, fixtures.NodePortType),
			ipv6Service("local-some", "fd00:10:96::22", 30082, fixtures.NodePortType, fixtures.ExternalTrafficPolicyLocal),
			ipv6Service("empty", "fd00:10:96::50", 30050, fixtures.NodePortType),
		},
		slices: []*discoveryv1.EndpointSlice{
			ipv6Slice("web", fixtures.Endpoint("fd00:10:244::1", testNodeName), fixtures.Endpoint("fd00:10:244:1::1", testOtherNode)),
			ipv6Slice("local-some", fixtures.Endpoint("fd00:10:244::3", testNodeName), fixtures.Endpoint("fd00:10:244:1::3", testOtherNode)),
		},
	}
}

// ipv6IntegrationPackets are traced on the kernel's rules and the fake's.
var ipv6IntegrationPackets = []iptablestest.Packet{
	{Source: netip.MustParseAddr(testOutsideIPv6), Destination: netip.MustParseAddr("fd00:10:96::20"), DestinationPort: 80},
	{Source: netip.MustParseAddr("fd00:10:244::7"), Destination: netip.MustParseAddr("fd00:10:96::20"), DestinationPort: 80},
	{Source: netip.MustParseAddr(testOutsideIPv6), Destination: netip.MustParseAddr(testNodeIPv6), DestinationPort: 30080},
	{Source: netip.MustParseAddr(testOutsideIPv6), Destination: netip.MustParseAddr(testNodeIPv6), DestinationPort: 30082},
	{Source: netip.MustParseAddr("::1"), Destination: netip.MustParseAddr("::1"), DestinationPort: 30080},
	{Source: netip.MustParseAddr("fd00:10:244::7"), Destination: netip.MustParseAddr("fd00:10:96::50"), DestinationPort: 80},
}

// TestIntegrationIPv6RestoreAndReadBack applies an IPv6 render with
// ip6tables-restore (legacy and nft) in a fresh network namespace, reads
// it back with ip6tables-save, and wants the kernel's rules in IPv6 form
// and routing every packet like the fake's; a partial sync goes in too.
// IPv4's tables in the same namespace stay empty.
func TestIntegrationIPv6RestoreAndReadBack(t *testing.T) {
	roottest.Require(t, "creates network namespaces and runs ip6tables-restore in them")
	for _, backend := range []kernel.Backend{kernel.BackendLegacy, kernel.BackendNFT} {
		t.Run(string(backend), func(t *testing.T) {
			ns := newTestNetns(t)
			runner, err := kernel.NewExecRunner(kernel.ExecOptions{Backend: backend, Family: corev1.IPv6Protocol, NetNS: ns})
			if err != nil {
				t.Fatalf("ip6tables %s backend unusable (install the iptables package): %v", backend, err)
			}
			opts := testOptionsIPv6()
			opts.RandomFully = runner.HasRandomFully()
			r := newRenderer(t, opts)
			fake := iptablestest.NewFakeRunner()
			fakeRenderer := newRenderer(t, opts)
			c := ipv6IntegrationCluster()

			res, err := iptables.Sync(runner, r, c.ipv6Snapshot())
			if err != nil {
				t.Fatalf("first sync: %v", err)
			}
			if !res.FullSync {
				t.Fatal("first sync was partial, want a full sync")
			}
			if _, err := iptables.Sync(fake, fakeRenderer, c.ipv6Snapshot()); err != nil {
				t.Fatal(err)
			}
			saved := saveTables(t, runner)
			svcChain := iptables.ServiceChainName("default/web:http", "tcp")
			oldSEP := iptables.EndpointChainName("default/web:http", "tcp", "[fd00:10:244:1::1]:8080")
			requireLines(t, "ip6tables-save after the full sync", saved,
				`-A KUBE-SERVICES -d fd00:10:96::20/128 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j `+svcChain,
				`-A `+svcChain+` ! -s fd00:10:244::/56 -d fd00:10:96::20/128 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
				`-A `+oldSEP+` -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination [fd00:10:244:1::1]:8080`,
				`-A KUBE-SERVICES -d fd00:10:96::50/128 -p tcp -m comment --comment "default/empty:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp6-port-unreachable`,
				`-A KUBE-SERVICES ! -d ::1/128 -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`,
			)
			if strings.Contains(saved, "127.0.0.0/8") || strings.Contains(saved, "block incoming localnet connections") {
				t.Errorf("IPv6 tables hold IPv4's localhost node-port guard:\n%s", saved)
			}
			sameTracesOf(t, kernelDump(t, runner), fake.Dump(), ipv6IntegrationPackets, netip.MustParseAddr(testNodeIPv6))

			// Partial sync after one endpoint changed.
			c.slices[0].Endpoints[1].Addresses = []string{"fd00:10:244:1::99"}
			if res, err = iptables.Sync(runner, r, c.ipv6Snapshot()); err != nil {
				t.Fatalf("second sync: %v", err)
			} else if res.FullSync || res.ChangedServicePorts != 1 {
				t.Fatalf("second sync: full=%v changed=%d, want a partial sync of one service port", res.FullSync, res.ChangedServicePorts)
			}
			if _, err := iptables.Sync(fake, fakeRenderer, c.ipv6Snapshot()); err != nil {
				t.Fatal(err)
			}
			saved = saveTables(t, runner)
			if strings.Contains(saved, oldSEP) {
				t.Errorf("partial sync left the old endpoint chain %s behind", oldSEP)
			}
			requireLines(t, "ip6tables-save after the partial sync", saved,
				`-A `+iptables.EndpointChainName("default/web:http", "tcp", "[fd00:10:244:1::99]:8080")+` -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination [fd00:10:244:1::99]:8080`)
			sameTracesOf(t, kernelDump(t, runner), fake.Dump(), ipv6IntegrationPackets, netip.MustParseAddr(testNodeIPv6))

			// The IPv4 side of the namespace saw none of it.
			v4, err := kernel.NewExecRunner(kernel.ExecOptions{Backend: backend, NetNS: ns})
			if err != nil {
				t.Fatal(err)
			}
			if v4saved := saveTables(t, v4); strings.Contains(v4saved, "KUBE-") {
				t.Errorf("iptables (IPv4) of the namespace holds kube-proxy chains after IPv6 syncs:\n%s", v4saved)
			}
		})
	}
}

// sameTracesOf checks that the kernel's (normalised) rules route every
// packet like the fake's rules do; the first must reach two endpoints.
func sameTracesOf(t *testing.T, kernel, fake *iptablestest.Dump, packets []iptablestest.Packet, nodeIP netip.Addr) {
	t.Helper()
	k := &iptablestest.Tracer{Dump: kernel, NodeIPs: []netip.Addr{nodeIP}}
	f := &iptablestest.Tracer{Dump: fake, NodeIPs: []netip.Addr{nodeIP}}
	summary := func(r iptablestest.Result) string {
		return strings.Join(r.Destinations(), ",") + " all-masq=" + boolString(r.AllMasqueraded()) +
			" any-masq=" + boolString(r.AnyMasqueraded()) + " rejected=" + boolString(r.Rejected()) + " dropped=" + boolString(r.Dropped())
	}
	if got := k.Trace(packets[0]).Destinations(); len(got) != 2 {
		t.Fatalf("kernel rules: the first packet should reach two endpoints, got %v\n%s", got, k.Trace(packets[0]))
	}
	for _, p := range packets {
		kr, fr := k.Trace(p), f.Trace(p)
		if summary(kr) != summary(fr) {
			t.Errorf("%s: kernel rules give %s, fake gives %s\nkernel trace:\n%s", p, summary(kr), summary(fr), kr)
		}
	}
}
