package iptables_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	"github.com/svclab/svclab/internal/fixtures"
	"github.com/svclab/svclab/internal/golden"
	"github.com/svclab/svclab/internal/iptsave"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/iptables/iptablestest"
	"github.com/svclab/svclab/proxy/model"
)

// threeServices: web (NodePort, 2 endpoints), api (1 endpoint), db (2
// endpoints).
func threeServices() cluster {
	tcp := corev1.ProtocolTCP
	return cluster{
		services: []*corev1.Service{
			fixtures.Service("default", "web", "10.96.0.20", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 30080)}, fixtures.NodePortType),
			fixtures.Service("default", "api", "10.96.0.21", []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 0)}),
			fixtures.Service("default", "db", "10.96.0.22", []corev1.ServicePort{fixtures.ServicePort("sql", tcp, 5432, 0)}),
		},
		slices: []*discoveryv1.EndpointSlice{
			fixtures.EndpointSlice("default", "web", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)}, fixtures.Endpoint("10.244.1.1", testNodeName), fixtures.Endpoint("10.244.2.1", testOtherNode)),
			fixtures.EndpointSlice("default", "api", []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)}, fixtures.Endpoint("10.244.1.2", testNodeName)),
			fixtures.EndpointSlice("default", "db", []discoveryv1.EndpointPort{fixtures.EndpointPort("sql", tcp, 5432)}, fixtures.Endpoint("10.244.1.3", testNodeName), fixtures.Endpoint("10.244.2.3", testOtherNode)),
		},
	}
}

// applyOrFail restores res on fake and confirms it to the renderer.
func applyOrFail(t *testing.T, fake *iptablestest.FakeRunner, r *iptables.Renderer, res *iptables.Result) {
	t.Helper()
	if err := fake.Restore(res.Payload()); err != nil {
		t.Fatalf("restore (full=%v) failed: %v\n%s", res.FullSync, err, res.Payload())
	}
	r.Applied(res)
}

// assertSameAsFreshFullSync checks that fake holds exactly what a fresh
// renderer's full sync of snap produces on a fresh kernel: partial syncs
// must converge to the same state.
func assertSameAsFreshFullSync(t *testing.T, fake *iptablestest.FakeRunner, opts iptables.Options, snap *model.Snapshot) {
	t.Helper()
	fresh := iptablestest.NewFakeRunner()
	renderer := newRenderer(t, opts)
	if len(fake.Dump().Chain("nat", "PREROUTING").Rules) > 0 {
		// The fake under test went through Sync: add the jump rules too.
		for _, j := range renderer.JumpRules() {
			if err := fresh.EnsureJump(j); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := fresh.Restore(renderer.Render(snap).Payload()); err != nil {
		t.Fatalf("fresh full sync rejected: %v", err)
	}
	for _, table := range []string{iptables.TableFilter, iptables.TableNAT} {
		want, _ := fresh.Save(table)
		got, _ := fake.Save(table)
		if string(got) != string(want) {
			t.Fatalf("table %s after partial syncs differs from a fresh full sync:\n%s", table, golden.LineDiff(string(want), string(got)))
		}
	}
}

func TestPartialSyncAfterOneEndpointChanged(t *testing.T) {
	c := threeServices()
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	applyOrFail(t, fake, r, r.Render(c.snapshot()))

	c.slices[0].Endpoints[1].Addresses = []string{"10.244.2.9"}
	res := r.Render(c.snapshot())
	if res.FullSync {
		t.Fatal("want a partial sync after Applied")
	}
	if res.ChangedServicePorts != 1 {
		t.Errorf("ChangedServicePorts = %d, want 1", res.ChangedServicePorts)
	}
	oldSEP := iptables.EndpointChainName("default/web:http", "tcp", "10.244.2.1:8080")
	if !slices.Equal(res.DeletedChains, []string{oldSEP}) {
		t.Errorf("DeletedChains = %v, want [%s]", res.DeletedChains, oldSEP)
	}
	golden.Check(t, "partial_endpoint_changed.golden", res.Payload())
	applyOrFail(t, fake, r, res)
	assertSameAsFreshFullSync(t, fake, testOptions(), c.snapshot())
}

func TestPartialSyncAfterServiceDeleted(t *testing.T) {
	c := threeServices()
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	applyOrFail(t, fake, r, r.Render(c.snapshot()))

	c.services = c.services[:2] // delete db
	res := r.Render(c.snapshot())
	if res.FullSync || res.ChangedServicePorts != 0 {
		t.Errorf("FullSync=%v ChangedServicePorts=%d, want a partial sync writing no service chains", res.FullSync, res.ChangedServicePorts)
	}
	wantDeleted := []string{
		iptables.ServiceChainName("default/db:sql", "tcp"),
		iptables.EndpointChainName("default/db:sql", "tcp", "10.244.1.3:5432"),
		iptables.EndpointChainName("default/db:sql", "tcp", "10.244.2.3:5432"),
	}
	slices.Sort(wantDeleted)
	if !slices.Equal(res.DeletedChains, wantDeleted) {
		t.Errorf("DeletedChains = %v, want %v", res.DeletedChains, wantDeleted)
	}
	golden.Check(t, "partial_service_deleted.golden", res.Payload())
	applyOrFail(t, fake, r, res)
	assertSameAsFreshFullSync(t, fake, testOptions(), c.snapshot())
}

func TestPartialSyncWithoutChangesWritesOnlySharedChains(t *testing.T) {
	c := threeServices()
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	applyOrFail(t, fake, r, r.Render(c.snapshot()))

	res := r.Render(c.snapshot())
	if res.FullSync || res.ChangedServicePorts != 0 || len(res.DeletedChains) != 0 {
		t.Fatalf("FullSync=%v Changed=%d Deleted=%v, want an empty partial sync", res.FullSync, res.ChangedServicePorts, res.DeletedChains)
	}
	if strings.Contains(string(res.Payload()), ":KUBE-SVC-") || strings.Contains(string(res.Payload()), ":KUBE-SEP-") {
		t.Errorf("unchanged service chains were rewritten:\n%s", res.Payload())
	}
	if !strings.Contains(string(res.Payload()), "-A KUBE-SERVICES -m comment --comment \"default/db:sql cluster IP\"") {
		t.Errorf("KUBE-SERVICES must be rewritten whole, with the unchanged services too:\n%s", res.Payload())
	}
	if res.ServicePorts != 3 || res.Endpoints != 5 || res.NATChains != 9 {
		t.Errorf("counts: ServicePorts=%d Endpoints=%d NATChains=%d, want 3, 5, 9", res.ServicePorts, res.Endpoints, res.NATChains)
	}
	applyOrFail(t, fake, r, res)
	assertSameAsFreshFullSync(t, fake, testOptions(), c.snapshot())
}

// TestPartialSyncLeavesUnchangedSharedChainsOut: a changed endpoint
// rewrites its service's own chains only; the filter table and nat's
// shared chains, the same as the kernel holds, are not in the payload.
func TestPartialSyncLeavesUnchangedSharedChainsOut(t *testing.T) {
	c := threeServices()
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	applyOrFail(t, fake, r, r.Render(c.snapshot()))

	c.slices[2].Endpoints[0].Addresses = []string{"10.244.1.33"}
	res := r.Render(c.snapshot())
	if res.FullSync || res.FilterTable || res.SharedNATChains || res.ChangedServicePorts != 1 {
		t.Fatalf("FullSync=%v FilterTable=%v SharedNATChains=%v Changed=%d, want a partial sync of one service port's own chains",
			res.FullSync, res.FilterTable, res.SharedNATChains, res.ChangedServicePorts)
	}
	for _, absent := range []string{"*filter", ":KUBE-SERVICES", ":KUBE-NODEPORTS", ":KUBE-POSTROUTING", ":KUBE-MARK-MASQ", "-A KUBE-SERVICES"} {
		if strings.Contains(string(res.Payload()), absent) {
			t.Errorf("payload has %q, which did not change:\n%s", absent, res.Payload())
		}
	}
	applyOrFail(t, fake, r, res)
	assertSameAsFreshFullSync(t, fake, testOptions(), c.snapshot())
}

// TestPartialSyncWritesTheSharedChainsThatChanged: a new Service adds a
// KUBE-SERVICES rule (nat's shared chains, not the filter table); a
// Service whose last endpoint goes gets a REJECT in the filter table and
// loses its KUBE-SERVICES rule (both).
func TestPartialSyncWritesTheSharedChainsThatChanged(t *testing.T) {
	tcp := corev1.ProtocolTCP
	c := threeServices()
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	applyOrFail(t, fake, r, r.Render(c.snapshot()))

	c.services = append(c.services, fixtures.Service("default", "cache", "10.96.0.23", []corev1.ServicePort{fixtures.ServicePort("redis", tcp, 6379, 0)}))
	c.slices = append(c.slices, fixtures.EndpointSlice("default", "cache", []discoveryv1.EndpointPort{fixtures.EndpointPort("redis", tcp, 6379)}, fixtures.Endpoint("10.244.1.4", testNodeName)))
	res := r.Render(c.snapshot())
	if res.FullSync || res.FilterTable || !res.SharedNATChains {
		t.Errorf("Service added: FullSync=%v FilterTable=%v SharedNATChains=%v, want nat's shared chains only", res.FullSync, res.FilterTable, res.SharedNATChains)
	}
	applyOrFail(t, fake, r, res)
	assertSameAsFreshFullSync(t, fake, testOptions(), c.snapshot())

	c.slices[1].Endpoints = nil // api has no endpoint left
	res = r.Render(c.snapshot())
	if res.FullSync || !res.FilterTable || !res.SharedNATChains {
		t.Errorf("last endpoint gone: FullSync=%v FilterTable=%v SharedNATChains=%v, want both tables' shared chains", res.FullSync, res.FilterTable, res.SharedNATChains)
	}
	if !strings.Contains(string(res.Payload()), `-A KUBE-SERVICES -m comment --comment "default/api:http has no endpoints"`) {
		t.Errorf("no REJECT for default/api:http in the payload:\n%s", res.Payload())
	}
	applyOrFail(t, fake, r, res)
	assertSameAsFreshFullSync(t, fake, testOptions(), c.snapshot())
}

// TestSyncWithNothingElseToWriteRepairsTheSharedChains: KUBE-SERVICES
// flushed behind the proxy's back stays empty through a partial sync that
// writes other chains (the payload leaves it out), and is written whole
// again by the next sync with nothing else to write, as every upstream
// sync writes it.
func TestSyncWithNothingElseToWriteRepairsTheSharedChains(t *testing.T) {
	c := threeServices()
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	applyOrFail(t, fake, r, r.Render(c.snapshot()))
	if err := fake.Restore([]byte("*nat\n-F KUBE-SERVICES\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}

	c.slices[2].Endpoints[0].Addresses = []string{"10.244.1.33"}
	applyOrFail(t, fake, r, r.Render(c.snapshot()))
	if rules := fake.Dump().Chain("nat", "KUBE-SERVICES").Rules; len(rules) != 0 {
		t.Errorf("KUBE-SERVICES has %d rules after a sync that left it out, want it still flushed", len(rules))
	}

	res := r.Render(c.snapshot())
	if res.FullSync || !res.FilterTable || !res.SharedNATChains || res.ChangedServicePorts != 0 {
		t.Fatalf("nothing changed: FullSync=%v FilterTable=%v SharedNATChains=%v Changed=%d, want a partial sync of the shared chains",
			res.FullSync, res.FilterTable, res.SharedNATChains, res.ChangedServicePorts)
	}
	applyOrFail(t, fake, r, res)
	assertSameAsFreshFullSync(t, fake, testOptions(), c.snapshot())
}

func TestFullSyncWhenThePreviousPayloadWasNotConfirmed(t *testing.T) {
	c := threeServices()
	r := newRenderer(t, testOptions())

	first := r.Render(c.snapshot())
	if !first.FullSync || !r.NeedsFullSync() {
		t.Fatal("first render must be full, and the next one too until Applied")
	}
	if !r.Render(c.snapshot()).FullSync {
		t.Error("render after an unconfirmed render must be a full sync")
	}

	// Applied with a result that is not the latest: treated as unknown.
	stale := r.Render(c.snapshot())
	latest := r.Render(c.snapshot())
	r.Applied(stale)
	if !r.Render(c.snapshot()).FullSync {
		t.Error("Applied(stale result) must lead to a full sync")
	}
	_ = latest

	// Applied, then Reset: full again.
	res := r.Render(c.snapshot())
	r.Applied(res)
	if r.NeedsFullSync() {
		t.Error("NeedsFullSync after Applied")
	}
	r.Reset()
	if !r.NeedsFullSync() || !r.Render(c.snapshot()).FullSync {
		t.Error("render after Reset must be a full sync")
	}
}

func TestFullSyncAfterFailureDeletesChainsOfTheFailedRender(t *testing.T) {
	// Applied state has web; a render with web's endpoint changed fails
	// (Reset); the next full sync no longer needs that render's new SEP
	// chain and must delete it in case the failed restore created it.
	c := threeServices()
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	applyOrFail(t, fake, r, r.Render(c.snapshot()))

	c.slices[0].Endpoints[1].Addresses = []string{"10.244.2.9"}
	failed := r.Render(c.snapshot())
	r.Reset()

	c.slices[0].Endpoints[1].Addresses = []string{"10.244.2.1"}
	res := r.Render(c.snapshot())
	if !res.FullSync {
		t.Fatal("want a full sync after Reset")
	}
	tried := iptables.EndpointChainName("default/web:http", "tcp", "10.244.2.9:8080")
	if !slices.Contains(res.DeletedChains, tried) {
		t.Errorf("DeletedChains = %v, want it to include %s from the failed render", res.DeletedChains, tried)
	}
	// Deleting a chain that never got created is harmless: ":CHAIN"
	// creates it, then -X removes it.
	_ = failed
	applyOrFail(t, fake, r, res)
	assertSameAsFreshFullSync(t, fake, testOptions(), c.snapshot())
}

func TestFullSyncDeletesStaleServiceChainsReportedByTheKernel(t *testing.T) {
	fake := iptablestest.NewFakeRunner()
	// Left over from an earlier kube-proxy: a service chain nobody owns,
	// and a chain that is not kube-proxy's.
	leftover := "*nat\n:KUBE-SVC-STALESTALESTALE1 - [0:0]\n:KUBE-SEP-STALESTALESTALE1 - [0:0]\n:MY-OWN-CHAIN - [0:0]\n" +
		"-A KUBE-SVC-STALESTALESTALE1 -j KUBE-SEP-STALESTALESTALE1\nCOMMIT\n"
	if err := fake.Restore([]byte(leftover)); err != nil {
		t.Fatal(err)
	}
	c := threeServices()
	r := newRenderer(t, testOptions())
	save, _ := fake.Save(iptables.TableNAT)
	r.SetExistingChains(iptables.TableNAT, iptsave.ChainNames(string(save)))
	res := r.Render(c.snapshot())
	want := []string{"KUBE-SEP-STALESTALESTALE1", "KUBE-SVC-STALESTALESTALE1"}
	if !slices.Equal(res.DeletedChains, want) {
		t.Errorf("DeletedChains = %v, want %v", res.DeletedChains, want)
	}
	applyOrFail(t, fake, r, res)
	nat := fake.Dump().Tables["nat"]
	if nat.Chains["KUBE-SVC-STALESTALESTALE1"] != nil || nat.Chains["MY-OWN-CHAIN"] == nil {
		t.Errorf("after sync: stale chain present=%v, foreign chain present=%v; want false, true",
			nat.Chains["KUBE-SVC-STALESTALESTALE1"] != nil, nat.Chains["MY-OWN-CHAIN"] != nil)
	}
}

func TestLargeClusterModeDropsEndpointCommentsAndForcesFullSync(t *testing.T) {
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	small := clusterIPService(3)
	applyOrFail(t, fake, r, r.Render(small.snapshot()))

	big := bigCluster(110, 10) // 1100 endpoints > 1000
	res := r.Render(big.snapshot())
	if !res.FullSync || !res.LargeCluster {
		t.Fatalf("FullSync=%v LargeCluster=%v, want both when crossing the threshold", res.FullSync, res.LargeCluster)
	}
	text := string(res.Payload())
	if strings.Contains(text, " -> 10.") {
		t.Error("large cluster mode must drop the per-endpoint \"svc -> ep\" comments")
	}
	if !strings.Contains(text, `--comment "ns0/svc0:http cluster IP"`) {
		t.Error("large cluster mode keeps the cluster IP comments")
	}
	if strings.Contains(text, "-m comment --comment ns0/svc0:http -s") {
		t.Error("large cluster mode must drop the KUBE-SEP comments")
	}
	applyOrFail(t, fake, r, res)
	assertSameAsFreshFullSync(t, fake, testOptions(), big.snapshot())
}

// bigCluster has n ClusterIP services ns<i>/svc<i>:http, each with eps
// endpoints.
func bigCluster(n, eps int) cluster {
	var c cluster
	tcp := corev1.ProtocolTCP
	for i := range n {
		ns, name := fmt.Sprintf("ns%d", i), fmt.Sprintf("svc%d", i)
		clusterIP := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}).String()
		c.services = append(c.services, fixtures.Service(ns, name, clusterIP, []corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, 0)}))
		var endpoints []discoveryv1.Endpoint
		for j := range eps {
			k := i*eps + j
			endpoints = append(endpoints, fixtures.Endpoint(netip.AddrFrom4([4]byte{10, byte(244 + k>>16), byte(k >> 8), byte(k)}).String(), testOtherNode))
		}
		c.slices = append(c.slices, fixtures.EndpointSlice(ns, name, []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)}, endpoints...))
	}
	return c
}

// TestRandomChangesConvergeLikeFullSyncs makes many random changes, syncs
// partially after each, and checks after every step that the fake kernel
// holds what a fresh full sync would write.
func TestRandomChangesConvergeLikeFullSyncs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tcp := corev1.ProtocolTCP
	c := cluster{}
	fake := iptablestest.NewFakeRunner()
	r := newRenderer(t, testOptions())
	nextIP := 1
	newEndpoint := func() discoveryv1.Endpoint {
		nextIP++
		node := testOtherNode
		if rng.IntN(2) == 0 {
			node = testNodeName
		}
		return fixtures.Endpoint(netip.AddrFrom4([4]byte{10, 244, byte(nextIP >> 8), byte(nextIP)}).String(), node)
	}
	for step := range 300 {
		switch op := rng.IntN(7); {
		case op == 0 || len(c.services) == 0: // add a service
			i := len(c.services) + step*10
			name := fmt.Sprintf("svc%d", i)
			s := fixtures.Service("default", name, netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}).String(),
				[]corev1.ServicePort{fixtures.ServicePort("http", tcp, 80, int32(30000+i%2000))})
			if rng.IntN(2) == 0 {
				fixtures.NodePortType(s)
				if rng.IntN(2) == 0 {
					fixtures.ExternalTrafficPolicyLocal(s)
				}
			} else {
				s.Spec.Ports[0].NodePort = 0
			}
			c.services = append(c.services, s)
			c.slices = append(c.slices, fixtures.EndpointSlice("default", name, []discoveryv1.EndpointPort{fixtures.EndpointPort("http", tcp, 8080)}))
		case op == 1: // delete a service and its slice
			i := rng.IntN(len(c.services))
			c.services = slices.Delete(c.services, i, i+1)
			c.slices = slices.Delete(c.slices, i, i+1)
		case op <= 3: // add an endpoint
			s := c.slices[rng.IntN(len(c.slices))]
			s.Endpoints = append(s.Endpoints, newEndpoint())
		case op == 4: // remove an endpoint
			s := c.slices[rng.IntN(len(c.slices))]
			if len(s.Endpoints) > 0 {
				k := rng.IntN(len(s.Endpoints))
				s.Endpoints = slices.Delete(s.Endpoints, k, k+1)
			}
		case op == 5: // flip readiness
			s := c.slices[rng.IntN(len(c.slices))]
			if len(s.Endpoints) > 0 {
				e := &s.Endpoints[rng.IntN(len(s.Endpoints))]
				e.Conditions.Ready = ptr.To(e.Conditions.Ready != nil && !*e.Conditions.Ready)
			}
		case op == 6: // change the service port
			s := c.services[rng.IntN(len(c.services))]
			s.Spec.Ports[0].Port++
		}
		if rng.IntN(25) == 0 {
			r.Reset() // an occasional forced full sync
		}
		snap := c.snapshot()
		res := r.Render(snap)
		if rng.IntN(20) == 0 {
			// Pretend this restore failed before reaching the kernel.
			r.Reset()
			continue
		}
		applyOrFail(t, fake, r, res)
		assertSameAsFreshFullSync(t, fake, testOptions(), snap)
	}
}
