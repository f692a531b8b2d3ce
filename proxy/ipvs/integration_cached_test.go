package ipvs

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	libipvs "github.com/moby/ipvs"
	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/roottest"
	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
	"github.com/svclab/svclab/proxy/model"
)

// newIntegrationBackend is a Backend over the real kernel of namespace ns.
func newIntegrationBackend(t *testing.T, ns string) (*Backend, *kernel.Netlink) {
	t.Helper()
	k, ipt := openKernel(t, ns), execRunner(t, iptkernel.BackendHost, ns)
	b, err := New(k, ipt, Options{ClusterCIDR: prefix(clusterPod), MasqueradeBit: 14}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b, k
}

// syncAndCheck syncs snap, checks the kernel calls the sync reports, and
// that the kernel (read independently of package kernel) holds what snap
// asks for.
func syncAndCheck(t *testing.T, step string, b *Backend, ns string, k *kernel.Netlink, snap *model.Snapshot, full bool, calls kernel.Calls) SyncResult {
	t.Helper()
	res, err := b.Sync(snap)
	if err != nil {
		t.Fatalf("%s: Sync: %v\n%s", step, err, res.Plan)
	}
	t.Logf("%s: full=%v, kernel calls: %s", step, res.Full, res.Kernel)
	if res.Full != full {
		t.Errorf("%s: full=%v, want %v", step, res.Full, full)
	}
	if calls != nil && !maps.Equal(res.Kernel, calls) {
		t.Errorf("%s: kernel calls\n  got  %s\n  want %s\nplan:\n%s", step, res.Kernel, calls, res.Plan)
	}
	d, err := b.Desired(snap)
	if err != nil {
		t.Fatal(err)
	}
	checkIPVSState(t, ns, k, d)
	return res
}

// deleteDestinationBehindOurBack removes a destination with moby/ipvs
// directly, as `ipvsadm -d` would.
func deleteDestinationBehindOurBack(t *testing.T, ns string, vs kernel.VirtualServer, rs kernel.RealServer) {
	t.Helper()
	h, err := libipvs.New(filepath.Join("/run/netns", ns))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	svc := &libipvs.Service{Address: vs.Address.AsSlice(), Protocol: uint16(vs.Protocol.Number()), Port: vs.Port, AddressFamily: 2}
	dst := &libipvs.Destination{Address: rs.Address.AsSlice(), Port: rs.Port, AddressFamily: 2}
	if err := h.DelDestination(svc, dst); err != nil {
		t.Fatalf("ipvsadm -d %s -r %s: %v", vs.Target(), rs.Key(), err)
	}
}

// TestIntegrationCachedSync checks the partial syncs against a real
// kernel: between full syncs the Backend diffs against what it wrote, so
// a change reaches the kernel with requests in proportion to it; a
// destination removed behind its back comes back with the next full sync;
// an error makes the next sync a full one.
func TestIntegrationCachedSync(t *testing.T) {
	roottest.Require(t, "creates network namespaces and programs IPVS, ipsets, addresses and iptables in them")
	roottest.RequireIPVS(t)
	ns := newTestNetns(t)
	b, k := newIntegrationBackend(t, ns)
	snap := itSnapshot("local:10.244.0.8:8080", "10.244.1.9:8080")
	syncAndCheck(t, "first sync", b, ns, k, snap, true, nil)
	syncAndCheck(t, "nothing changed", b, ns, k, snap, false, kernel.Calls{"NodeAddresses": 1})

	// A remote web endpoint moves: only the cluster IP's virtual server
	// changes (the Local node port keeps its local endpoint); the one
	// losing a TCP destination has its destinations read for their
	// connection counts.
	moved := itSnapshot("local:10.244.0.8:8080", "10.244.1.10:8080")
	res := syncAndCheck(t, "one endpoint changed", b, ns, k, moved, false,
		kernel.Calls{"NodeAddresses": 1, "RealServers": 1, "AddRealServer": 1, "DeleteRealServer": 1})
	if got, want := planLines(res.Plan), []string{
		"ipvsadm -a -t 10.96.0.20:80 -r 10.244.1.10:8080 -m -w 1",
		"ipvsadm -d -t 10.96.0.20:80 -r 10.244.1.9:8080",
	}; !slices.Equal(got, want) {
		t.Errorf("plan %q, want %q", got, want)
	}

	// Someone deletes a destination: the partial sync trusts what it
	// wrote, the full sync reads the kernel and puts it back.
	vs := kernel.VirtualServer{Address: addr("10.96.0.10"), Protocol: kernel.UDP, Port: 53}
	deleteDestinationBehindOurBack(t, ns, vs, kernel.RealServer{Address: addr("10.244.1.7"), Port: 53})
	res, err := b.Sync(moved)
	if err != nil || res.Full || len(res.Plan) != 0 || !maps.Equal(res.Kernel, kernel.Calls{"NodeAddresses": 1}) {
		t.Errorf("partial sync after an outside change: full=%v calls %s err %v\n%s", res.Full, res.Kernel, err, res.Plan)
	}
	b.ForceFullSync()
	res = syncAndCheck(t, "full sync", b, ns, k, moved, true, nil)
	if !slices.Contains(planLines(res.Plan), "ipvsadm -a -u 10.96.0.10:53 -r 10.244.1.7:53 -m -w 1") {
		t.Errorf("the full sync did not restore the deleted destination:\n%s", res.Plan)
	}
	vss := len(ipvsadmVirtualServers(t, ns))
	if res.Kernel["VirtualServers"] != 1 || res.Kernel["RealServers"] != vss {
		t.Errorf("full sync read %s, want one VirtualServers and RealServers for each of %d", res.Kernel, vss)
	}

	// The dummy device disappears: the next partial sync fails to bind a
	// new service's address, and the one after reads everything and
	// rebuilds it.
	h := nlHandle(t, ns)
	dummy, err := h.LinkByName(DummyDevice)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.LinkDel(dummy); err != nil {
		t.Fatal(err)
	}
	grown := snapshot(append(slices.Clone(moved.ServicePorts),
		sp("default", "new", "", corev1.ProtocolTCP, "10.96.0.30", 80, eps("10.244.1.40:80")))...)
	if res, err := b.Sync(grown); err == nil {
		t.Fatalf("a sync without %s succeeded:\n%s", DummyDevice, res.Plan)
	}
	syncAndCheck(t, "after an error", b, ns, k, grown, true, nil)
	syncAndCheck(t, "after the recovery", b, ns, k, grown, false, kernel.Calls{"NodeAddresses": 1})
}

// ipvsadmVirtualServers lists the namespace's virtual servers
// (ipvsadmSave's "-A" lines).
func ipvsadmVirtualServers(t *testing.T, ns string) []string {
	t.Helper()
	var out []string
	for _, line := range ipvsadmSave(t, ns) {
		if len(line) > 2 && line[:2] == "-A" {
			out = append(out, line)
		}
	}
	return out
}

// TestIntegrationCachedSyncAtScale compares, in a real kernel, a partial
// sync of one changed endpoint among many Services with reading the whole
// kernel (what every sync did before the Backend kept what it wrote): the
// kernel calls and the time (in the VM only their ratio means something).
func TestIntegrationCachedSyncAtScale(t *testing.T) {
	roottest.Require(t, "creates network namespaces and programs IPVS, ipsets, addresses and iptables in them")
	roottest.RequireIPVS(t)
	const services, endpoints = 200, 3
	ns := newTestNetns(t)
	b, k := newIntegrationBackend(t, ns)
	snap := scaleSnapshot(services, endpoints)
	moved := withEndpoint(snap, services/2+1, 2, "10.250.0.1") // not a node port
	if _, err := b.Sync(snap); err != nil {
		t.Fatal(err)
	}
	timed := func(s *model.Snapshot) (SyncResult, time.Duration) {
		start := time.Now()
		res, err := b.Sync(s)
		if err != nil {
			t.Fatal(err)
		}
		return res, time.Since(start)
	}
	partial, partialTook := timed(moved)
	counted := kernel.Count(k)
	start := time.Now()
	if _, err := ReadActual(counted); err != nil {
		t.Fatal(err)
	}
	readTook := time.Since(start)
	t.Logf("%d services x %d endpoints: one endpoint changed, partial sync: %d kernel calls (%s) in %v; "+
		"reading the whole kernel, as every sync did before: %d kernel calls in %v",
		services, endpoints, partial.Kernel.Total(), partial.Kernel, partialTook.Round(time.Microsecond),
		counted.Calls().Total(), readTook.Round(time.Microsecond))
	if partial.Full || partial.Kernel.Total() != 4 {
		t.Errorf("partial sync: full=%v, calls %s; want 4", partial.Full, partial.Kernel)
	}
	if got, want := counted.Calls()["RealServers"], services+services/10; got != want {
		t.Errorf("the whole kernel read RealServers %d times, want %d", got, want)
	}
}
